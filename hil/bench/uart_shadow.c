/*
 * The fault-free shadow line: the host line as it would be had no injected delay (uart_faults.c) ever held
 * a byte, kept beside the real one in the same units (global cycle x baud, uart_line.c). How long a delay
 * held a byte back is the difference of the two ends of its stop bit: its own delay, or one before it
 * that the line has not caught up. faulthold.c names such bytes (by their offset in the host's stream) to
 * the PC, which then knows the event they carried was the rig's loss, not the firmware's.
 */
#include "faulthold.h"
#include "uart_node.h"

void uart_shadow_advance(int id, struct uart_node *u, uint64_t start, uint64_t end, uint64_t baud, uint64_t off)
{
    uint64_t shadow_end;
    /* the same byte on the line no injected delay ever held: it ends `end - shadow_end` sooner */
    if (start < u->rx_shadow_free_scaled)
        start = u->rx_shadow_free_scaled;
    shadow_end = start + 10 * F_CPU;
    if (shadow_end > end)
        shadow_end = end;
    u->rx_shadow_free_scaled = shadow_end;
    if (off && end > shadow_end)
        faulthold_note(id, uart_generation(id), off - 1, (end - shadow_end) / baud);
}

/* The host's bytes still queued while the line is behind where it would be with no injected delay:
 * each is held back by at least that much (faulthold.c reports them with what the line delivered). */
int uart_queued_held(int id, uint64_t *gen, uint64_t *first, uint64_t *n, uint64_t *held_cycles)
{
    struct uart_node *u = &uart.n[id];
    size_t i;
    uint64_t behind = u->rx_line_free_scaled > u->rx_shadow_free_scaled
                          ? (u->rx_line_free_scaled - u->rx_shadow_free_scaled) / (u->rx_line_baud ? u->rx_line_baud : 1)
                          : 0;
    *n = 0;
    if (!behind)
        return 0;
    for (i = 0; i < u->inq_n; i++) {
        const struct in_byte *ib = &u->inq[(u->inq_head + i) % u->inq_cap];
        if (!ib->off)
            continue;
        if (!*n)
            *first = ib->off - 1;
        *n = ib->off - *first; /* the host's bytes are queued in stream order */
    }
    *gen = uart_generation(id);
    *held_cycles = behind;
    return *n > 0;
}

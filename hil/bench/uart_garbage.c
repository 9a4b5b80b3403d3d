/*
 * Garbage bursts (faults.c's `garbage` command): seeded random bytes on a node's line, in either
 * direction, as a noisy line or a babbling adapter makes them. Their values come from the fault PRNG
 * (uart_faults.c), so a burst repeats with the seed; they then go the way the line's own bytes go
 * (uart_line.c): in, behind the host's queued bytes and through the receive path (faults and cuts
 * apply); out, behind the node's queued output, dropped while the line is cut or hung up.
 */

#include "uart_node.h"

/* COUNT uniform random bytes (so 0x00, the frame delimiter, is 1 in 256 of them) onto the line, one
 * character (10 bit times at --baud) each. In: after the host bytes already queued, through the
 * receive path like any host byte (faults and cuts apply; not counted as read from the pty). Out:
 * towards the host from now (or after the output already queued), as MCU bytes go. */
void uart_garbage(int id, int dir, uint64_t count, uint64_t now)
{
    struct uart_node *u = &uart.n[id];
    uint64_t baud = uart_line_baud(id);
    uint64_t chr = (10 * F_CPU + baud - 1) / baud, at = now, k;
    if (dir == 0) {
        for (k = 0; k < count; k++)
            uart_inq_push(u, now, uart_fault_random_byte(), 0);
        u->garbage_bytes[0] += count;
        uart_arm(id);
        return;
    }
    at = uart.usb.kind == USB_IDEAL ? uart_outq_after_last(u, at) : at; /* (a model keeps the order itself) */
    for (k = 0; k < count; k++) {
        uint8_t b = uart_fault_random_byte();
        at += chr;
        u->garbage_bytes[1]++;
        if (u->hung) {
            u->hangup_dropped++;
        } else if (!uart_fault_cut(u, 1, at)) {
            uart_out_push(u, node_names[id], at, b); /* through the adapter as the node's own bytes */
        }
    }
}

/*
 * Fault application on the line (the control channel's commands are faults.c's): each byte in either
 * direction may be dropped, corrupted (one bit), delayed or duplicated with a given probability, drawn
 * from a seeded PRNG, so faults are reproducible in unpaced mode; a cut line drops every byte until the
 * cut ends; a garbage burst (uart_garbage.c) draws its random bytes here. The line model (uart_line.c) asks here
 * for each byte, in an order that fixes the PRNG's draws: a host byte's delay when it is armed, then when
 * it is taken its cut, drop, corrupt and repeat; an MCU byte's cut, drop, corrupt, delay, then repeat.
 * Injected bytes (inject.c) meet none of them: a calibration frame must arrive as sent.
 */
#include <inttypes.h>
#include <string.h>

#include "uart_node.h"

/* xorshift64*: the fault injector's PRNG (seeded, so faults are reproducible in unpaced mode) */
static double rng_unit(void)
{
    uart.rng ^= uart.rng >> 12;
    uart.rng ^= uart.rng << 25;
    uart.rng ^= uart.rng >> 27;
    return (double)((uart.rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

void uart_seed(uint64_t seed)
{
    uart.rng = seed * 0x9E3779B97F4A7C15ull + 1;
}

void uart_fault_set(int id, int dir, enum uart_fault_kind kind, double rate, uint64_t delay_cycles)
{
    struct fault *f = &uart.n[id].fault[dir];
    switch (kind) {
    case UART_FAULT_DROP:
        f->drop = rate;
        break;
    case UART_FAULT_CORRUPT:
        f->corrupt = rate;
        break;
    case UART_FAULT_DUP:
        f->dup = rate;
        break;
    case UART_FAULT_DELAY:
        f->delay = rate;
        f->delay_cycles = delay_cycles;
        break;
    }
}

void uart_faults_clear(int id)
{
    memset(uart.n[id].fault, 0, sizeof uart.n[id].fault);
}

void uart_cut(int id, uint64_t until)
{
    uart.n[id].uart_cut_until = until;
}

int uart_fault_cut(struct uart_node *u, int dir, uint64_t at)
{
    if (at >= u->uart_cut_until)
        return 0;
    u->cut_dropped[dir]++;
    return 1;
}

int uart_fault_in(struct uart_node *u, uint8_t *b)
{
    const struct fault *f = &u->fault[0];
    if (f->drop > 0 && rng_unit() < f->drop) {
        u->f_dropped[0]++;
        return 0;
    }
    if (f->corrupt > 0 && rng_unit() < f->corrupt) {
        *b ^= (uint8_t)(1u << (int)(rng_unit() * 8));
        u->f_corrupted[0]++;
    }
    return 1;
}

uint64_t uart_fault_in_delay(struct uart_node *u)
{
    const struct fault *f = &u->fault[0];
    if (f->delay > 0 && rng_unit() < f->delay) {
        u->f_delayed[0]++;
        return f->delay_cycles;
    }
    return 0;
}

int uart_fault_out(struct uart_node *u, uint8_t *b, uint64_t *at)
{
    const struct fault *f = &u->fault[1];
    if (f->drop > 0 && rng_unit() < f->drop) {
        u->f_dropped[1]++;
        return 0;
    }
    if (f->corrupt > 0 && rng_unit() < f->corrupt) {
        *b ^= (uint8_t)(1u << (int)(rng_unit() * 8));
        u->f_corrupted[1]++;
    }
    if (f->delay > 0 && rng_unit() < f->delay) {
        *at += f->delay_cycles;
        u->f_delayed[1]++;
    }
    return 1;
}

uint8_t uart_fault_random_byte(void)
{
    return (uint8_t)(rng_unit() * 256.0);
}

int uart_fault_repeats(struct uart_node *u, int dir)
{
    const struct fault *f = &u->fault[dir];
    if (f->dup > 0 && rng_unit() < f->dup) {
        u->f_duplicated[dir]++;
        return 1;
    }
    return 0;
}

/*
 * The UART bridge: each node's USART0 on a pseudo-terminal and on a Unix socket (the host's side: one of
 * the two holds the line at a time), host bytes paced into the MCU at the baud rate, MCU output queued
 * until its stop bit ends, faults on bytes. Its files, one concept each (uart_line.c has the overview):
 *
 *   uart_line.c    the line model: the two queues, host bytes paced at the adapter's rate (what the
 *                  host wrote taken in), MCU output complete when its stop bit ends and written to the
 *                  host's side, injections, the status counters
 *   uart_host.c    the host's side: the pty, the line's socket and which holds the line, the streams'
 *                  generations, hang-up and re-plug
 *   uart_rate.c    the USB-serial adapter's rate: the termios baud table, polling the host's setting,
 *                  a rate mismatch between the adapter and the node
 *   uart_usb.c     the USB-serial adapter's line model (--line-model ideal|ftdi|cdc-16u2): when a node's
 *                  byte reaches the host, when a host's byte reaches the line
 *   uart_faults.c  fault application: the seeded PRNG, per-byte drop/corrupt/delay/dup, cuts
 *   uart_garbage.c garbage bursts: seeded random bytes onto a line, either way
 *   uart_shadow.c  the fault-free shadow line: how long an injected delay held the host's bytes back
 *   uart_script.c  --script: host bytes at given virtual times (a replay's record)
 *
 * Their shared state is uart_node.h's, which no other file includes.
 */
#ifndef MMBENCH_UART_BRIDGE_H
#define MMBENCH_UART_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define INJECT_MAX 64 /* bytes in one injection (a FIRE frame is 10) */

/* settings, before the nodes are attached (main.c's options) */
void uart_set_baud(uint64_t baud);          /* --baud: host bytes are paced at it (10 bit times each) */
void uart_set_out_buffer(size_t bytes);     /* --out-buffer: unread MCU output kept per node */
void uart_set_simavr_timing(int on);        /* --uart-timing simavr (one-node mode): bytes handed over raw */
/* --line-model MODEL[:k=v]: the USB-serial adapter on every line (uart_usb.h); 0, or -1 with the reason */
int uart_set_line_model(const char *spec, char *err, unsigned errlen);
const char *uart_line_model(void);          /* its name: ideal, ftdi, cdc-16u2 */
uint64_t uart_default_baud(void);           /* --baud (0: none given that makes sense) */
int uart_simavr_timing(void);               /* --uart-timing simavr was given */
/* pty_lock/pty_unlock: around every change of a node's pty descriptor (hang-up, re-plug), for another
 * thread that reads the ptys (hostin.c) */
void uart_set_pty_lock(void (*lock)(void), void (*unlock)(void));
/* each MCU byte queued for the host, complete at global `at` (lockstep.c: a frame grant stops at a delimiter) */
void uart_on_out_byte(void (*fn)(uint8_t b, uint64_t at));

void uart_seed(uint64_t seed);
void uart_attach(int id);                        /* after cosim_add_node */
void uart_open_pty(int id, const char *run_dir); /* RUN_DIR/NODE.tty */
void uart_open_socket(int id);                   /* RUN_DIR/NODE.sock (after uart_open_pty) */
int uart_listen_fd(int id);                      /* the socket to poll for a connection (-1: none) */
const char *uart_link(int id);                   /* RUN_DIR/NODE.tty, the pty's stable path */
const char *uart_socket_path(int id);            /* RUN_DIR/NODE.sock ("": none) */
/* A connection waiting on the node's socket: it takes the line (a welcome, the node reset with
 * --arduino) or, while another holds it, is refused. At a grant point in lockstep. */
void uart_accept(int id, uint64_t now);
void uart_host_closed(int id, uint64_t gen);     /* the host closed stream `gen`: the line goes back to the pty */
int uart_host_fd(int id);                        /* where the host's bytes come from now (-1: hung up) */
int uart_host_is_socket(int id);
uint64_t uart_generation(int id);                /* the generation of the stream that holds the line */
uint64_t uart_in_read(int id);                   /* bytes read from the stream that holds the line */
uint64_t uart_out_written(int id);               /* bytes written to it */
int uart_hung_up(int id);                        /* the adapter is unplugged (uart_hangup until uart_replug) */
void uart_load_script(const char *path);
void uart_arm(int id);                           /* schedule the next host byte, if any */
void uart_reset(int id);                         /* after a node's reset (cosim_on_reset) */
void uart_read_host(int id, uint64_t now);       /* host bytes written so far enter at `now` */
int uart_read_host_exactly(int id, uint64_t total, uint64_t now, int timeout_ms); /* -1: timed out */
void uart_flush_out(int id, uint64_t now);       /* output complete by `now` to the host side */
uint64_t uart_next_out(int id);                  /* cycle the oldest unwritten byte was complete (NEVER: none) */
uint64_t uart_next_delimiter(int id, uint64_t now); /* the earliest queued 0x00 not complete by `now` (NEVER: none) */
void uart_close(int id);                         /* remove the pty link and the socket */
void uart_status_json(int id, struct sbuf *b);   /* a node's "tty","pts","uart":{...} in the status */
uint64_t uart_arduino_garbled(int id);           /* --arduino: slower host bytes the node read as 0x00 */
/* Reads the host's rate from the pty's termios: force (lockstep, before a grant: the host changes its
 * rate only between grants, so the grant runs at exactly that one), else at most once a millisecond of
 * wall time (paced: one ioctl, not one per byte). A socket says its rate in its packets: not polled. */
void uart_poll_host_baud(int id, int force);
uint64_t uart_line_baud(int id);   /* the host line's rate: the adapter's, or --baud without a pty */
double uart_node_baud(int id);     /* the node's UART rate, as its image set it (bits per second) */
/* faults (faults.c has the commands); dir 0: in (host -> MCU), 1: out (MCU -> host) */
enum uart_fault_kind { UART_FAULT_DROP, UART_FAULT_CORRUPT, UART_FAULT_DELAY, UART_FAULT_DUP };
/* each byte that way meets the fault with probability `rate` (a delay holds it back delay_cycles) */
void uart_fault_set(int id, int dir, enum uart_fault_kind kind, double rate, uint64_t delay_cycles);
void uart_faults_clear(int id);                  /* no fault on the node's bytes either way */
void uart_cut(int id, uint64_t until);           /* every byte either way dropped until global `until` */
void uart_garbage(int id, int dir, uint64_t count, uint64_t now); /* seeded random bytes onto the line */
void uart_hangup(int id);                        /* close the pty and the socket; output is dropped meanwhile */
void uart_replug(int id);                        /* a fresh pty (NODE.tty re-pointed atomically) and socket */
void uart_push_input(int id, uint64_t at, uint8_t b); /* a host byte reaching the line at `at` */
/* host bytes read from the host side (hostin.c), reaching the line at `at`, written at `baud` (0: unknown;
 * n 0: the host set its rate to `baud`, no bytes) */
void uart_take_host_bytes(int id, uint64_t at, const uint8_t *b, size_t n, uint64_t baud);
uint64_t uart_pty_baud(int fd); /* the rate set on a pty (either end), or 0 */
/* inject.c: puts n bytes on the line, the first start bit at `start` or when the line is free (a
 * host byte already begun ends first); returns the cycle it begins (global cycles, as the host line).
 * Host bytes held (uart_hold) stay held until the last stop bit ends, which calls done(id, at). */
uint64_t uart_inject(int id, const uint8_t *b, size_t n, uint64_t start, void (*done)(int id, uint64_t at));
void uart_hold(int id); /* no further host byte goes on the line until an injection has ended */
int uart_held(int id);  /* host bytes are held for an injection (armed or on the line) */
/* a byte whose stop bit ends now (simavr timing: handed to the receiver now), traced at the node's
 * cycle `at` (in global time) */
void uart_deliver_now(int id, uint8_t b, uint64_t at);

/* the host's bytes still queued behind an injected delay (1: some), for the `injected` reply (faulthold.c) */
int uart_queued_held(int id, uint64_t *gen, uint64_t *first, uint64_t *n, uint64_t *held_cycles);

#endif

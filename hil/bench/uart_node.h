/*
 * The UART bridge's state, shared by the files that make it up and by no other file (the rest of the
 * bench goes through uart_bridge.h): per node, the host's side (pty, socket, generations: uart_host.c),
 * the line's two queues and their timing (uart_line.c), the adapter's rate (uart_rate.c), the faults and
 * their counters (uart_faults.c, uart_garbage.c) and the line as it would be without injected delays
 * (uart_shadow.c).
 *
 * The files call one another in one direction only, no loop: uart_rate.c, uart_faults.c and uart_usb.c
 * (the adapter's line model, pure arithmetic) call none of the others; uart_host.c calls uart_rate.c; uart_shadow.c calls uart_host.c; uart_line.c calls those four;
 * uart_garbage.c and uart_script.c call uart_line.c (and uart_garbage.c the faults' PRNG).
 */
#ifndef MMBENCH_UART_NODE_H
#define MMBENCH_UART_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "uart_bridge.h"
#include "uart_usb.h"

struct in_byte {
    uint64_t at;   /* global cycle the byte reached the bench (host write, or script time) */
    uint8_t b;
    uint32_t baud; /* the adapter's rate when the byte reached it: it goes on the line at that rate */
    uint64_t off;  /* 1 + its offset in the host's byte stream of this pty (in_read), 0: not the host's
                    * (garbage, a script's, a duplicate): what faulthold.c names a held byte by */
};

struct out_byte {
    uint64_t at; /* global cycle the stop bit ends: the byte is complete at the host */
    uint8_t b;
};

struct fault {
    double drop, corrupt, delay, dup; /* probability per byte */
    uint64_t delay_cycles;
};

struct uart_node {
    /* pty */
    int master, slave;
    char pts[64];
    char link[512];
    /* The line's socket (linesock.c): while a connection holds the line (sock_conn >= 0) the host's bytes
     * come from it and the node's output goes to it; the pty waits meanwhile (its bytes stay in it). */
    int sock_listen, sock_conn;
    char sock_path[512];
    uint64_t sock_conns, sock_refused;
    /* Generations: every host stream (a pty made, a connection accepted) takes the node's next one
     * (streams + 1); in_read and out_written count on the stream that holds the line, whose generation
     * uart_generation() gives. The pty's counts wait in pty_in_read/pty_out_written while a connection
     * holds the line. */
    uint64_t streams, pty_gen, sock_gen;
    uint64_t pty_in_read, pty_out_written;
    /* host -> MCU */
    struct in_byte *inq;
    size_t inq_head, inq_n, inq_cap;
    size_t inq_limit;             /* bytes read from the pty at most waiting here */
    uint64_t rx_line_free_scaled; /* end of the last stop bit on the host line, in global cycle*baud units */
    uint64_t rx_line_baud;        /* the baud of those units (and of the two below): the last byte's */
    int rx_armed;
    uint64_t rx_armed_start_scaled, rx_prev_free_scaled; /* the armed host byte's start, the line before it */
    /* the line as it would be without injected delays (same units): how long a fault held a byte back
     * is the difference (faulthold.c), its own delay or one before it that the line has not caught up */
    uint64_t rx_shadow_free_scaled, rx_prev_shadow_scaled;
    /* an injection (inject.c): bytes on the line from a given cycle; host bytes wait meanwhile */
    int hold;         /* host bytes do not go on the line: an injection is armed or on it */
    int rx_armed_inj; /* the armed byte is the injection's */
    uint8_t inj_data[INJECT_MAX];
    size_t inj_n, inj_next; /* its bytes, and the next to go on the line */
    uint64_t inj_start;     /* the cycle its first start bit may begin */
    void (*inj_done)(int id, uint64_t at); /* its last stop bit ended at global `at` (uart_inject) */
    /* MCU -> host */
    struct out_byte *outq;
    size_t out_head, out_n, out_cap;
    /* counters */
    uint64_t in_read, in_delivered, in_ignored;
    uint64_t out_bytes, out_written, out_dropped;
    uint64_t f_dropped[2], f_corrupted[2], f_delayed[2], cut_dropped[2];
    uint64_t f_duplicated[2], garbage_bytes[2]; /* faults.c: dup, garbage */
    int rx_dup_head; /* the byte at the head of inq is a duplicate (not duplicated again) */
    /* hangup (faults.c): the pty and the socket are closed, output is dropped until they are back */
    int hung;
    uint64_t hangups, hangup_dropped;
    struct fault fault[2]; /* [0] in (host -> MCU), [1] out (MCU -> host) */
    uint64_t uart_cut_until;
    uint64_t first_in_cycle, last_in_cycle;
    /* The USB-serial adapter's rate: what the host set on its end of the pty (tcsetattr on the slave;
     * Linux's tcgetattr on the master returns the pair's termios), --baud at pty creation. Host bytes
     * are paced at it; while it and the node's USART0 rate differ by more than BAUD_MISMATCH, bytes in
     * either direction are not delivered (a real receiver sees framing errors) and are counted in
     * baud_mismatch_dropped [in, out]. 0: no pty (one-node stimulus mode): --baud, never a mismatch. */
    uint64_t host_baud;
    int script_baud; /* --script lines gave their bytes' rate (a replay's record): mismatches judged by it */
    uint64_t host_baud_changes;
    uint64_t termios_polled_ns; /* wall time of the last poll of the pty's termios */
    uint64_t baud_mismatch_dropped[2];
    uint64_t baud_mismatch_garbled; /* --arduino: slower host bytes the node read as 0x00 (uart_line.c) */
    struct usb_up usb_up; /* the USB-serial adapter's node-to-host side (uart_usb.c; --line-model) */
    uint64_t usb_moved;   /* node bytes a full packet sent earlier than the timer would have */
};
#define BAUD_MISMATCH 0.04

struct uart_bridge {
    uint64_t baud;     /* --baud: host bytes are paced at it (10 bit times each) */
    size_t out_buffer; /* --out-buffer: unread MCU output kept per node */
    uint64_t rng;      /* the fault injector's PRNG state (--seed, uart_faults.c) */
    int simavr_timing; /* --uart-timing simavr (one-node mode): no corrections, bytes handed over raw */
    struct usb_params usb; /* --line-model: the USB-serial adapter on every node's line (uart_usb.h) */
    char run_dir[400]; /* where NODE.tty links are (re)made */
    struct uart_node n[NNODES];
    /* Hooks set up by main.c (NULL: none). pty_lock/pty_unlock: around every change of a node's pty
     * descriptor (hang-up, re-plug), for another thread that reads the ptys (hostin.c). on_out_byte:
     * each MCU byte queued for the host, complete at global `at` (lockstep.c: a frame grant stops at
     * a delimiter). */
    void (*pty_lock)(void);
    void (*pty_unlock)(void);
    void (*on_out_byte)(uint8_t b, uint64_t at);
};
extern struct uart_bridge uart;

/* uart_line.c: the line's queues */
/* a byte reaching the line at `at` (global); `off`: 1 + its offset in the host's stream, 0 for a byte the
 * host did not write; at the adapter's rate now */
void uart_inq_push(struct uart_node *u, uint64_t at, uint8_t b, uint64_t off);
int uart_outq_push(struct uart_node *u, uint64_t at, uint8_t b); /* 0: the buffer is full (counted) */
/* `at`, or the moment the last byte queued for the host is complete if later: output keeps its order */
uint64_t uart_outq_after_last(const struct uart_node *u, uint64_t at);
/* A byte of the node's (or garbage on its line) reaches the adapter at `at` (global): through the line
 * model to the host's queue, the hook and the trace. Returns its arrival at the adapter after the bytes
 * before it (output keeps its order: a delayed byte holds back the ones after it). */
uint64_t uart_out_push(struct uart_node *u, const char *name, uint64_t at, uint8_t b);

/* uart_rate.c: the adapter's rate */
int uart_rate_mismatch(int id, uint64_t host);           /* `host` and the node's rate: no byte gets through */
void uart_rate_from_host(struct uart_node *u, uint64_t baud); /* the host set its port to `baud` (0: unknown) */
uint32_t uart_rate_adapter(const struct uart_node *u);    /* the rate a host byte goes on the line at now */
/* a fresh pty's line discipline raw and its rate the adapter's power-on one (--baud) */
void uart_rate_power_on(struct uart_node *u);

/* uart_faults.c: the faults applied to a byte (dir 0 in, host -> MCU; 1 out) */
int uart_fault_cut(struct uart_node *u, int dir, uint64_t at);  /* 1: the line is cut at `at` (counted) */
int uart_fault_in(struct uart_node *u, uint8_t *b);           /* drop (0) or corrupt *b: a host byte */
uint64_t uart_fault_in_delay(struct uart_node *u);            /* cycles a host byte is held back (0: none) */
int uart_fault_out(struct uart_node *u, uint8_t *b, uint64_t *at); /* drop (0), corrupt *b, delay *at */
int uart_fault_repeats(struct uart_node *u, int dir);         /* 1: the line repeats the byte (counted) */
uint8_t uart_fault_random_byte(void);                         /* a garbage byte, uniform (uart_garbage.c) */

/* uart_shadow.c: the line without injected delays. A byte of the host's stream (off: uart_inq_push's) on
 * the line from the shadow's `start` (scaled by `baud`, as the line's times) ends at `end` on the real
 * line: the shadow line moves on, and how long a delay held it is noted (faulthold.c) */
void uart_shadow_advance(int id, struct uart_node *u, uint64_t start, uint64_t end, uint64_t baud, uint64_t off);

/* uart_host.c: what the host side holding the line has now, at most `want` bytes (0: nothing now) */
size_t uart_host_read(int id, uint8_t *buf, size_t want);

#endif

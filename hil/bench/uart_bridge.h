/*
 * The UART bridge: each node's USART0 on a pseudo-terminal and on a Unix socket (the host's side: one of
 * the two holds the line at a time), host bytes paced into the MCU at the baud rate, MCU output queued
 * until its stop bit ends, faults on bytes (uart_bridge.c says how).
 */
#ifndef MMBENCH_UART_BRIDGE_H
#define MMBENCH_UART_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define INJECT_MAX 64 /* bytes in one injection (a FIRE frame is 10) */

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
    uint64_t baud_mismatch_garbled; /* --arduino: slower host bytes the node read as 0x00 (uart_bridge.c) */
};
#define BAUD_MISMATCH 0.04

struct uart_bridge {
    uint64_t baud;     /* --baud: host bytes are paced at it (10 bit times each) */
    size_t out_buffer; /* --out-buffer: unread MCU output kept per node */
    uint64_t rng;      /* the fault injector's PRNG state (--seed) */
    int simavr_timing; /* --uart-timing simavr (one-node mode): no corrections, bytes handed over raw */
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

void uart_seed(uint64_t seed);
void uart_attach(int id);                        /* after cosim_add_node */
void uart_open_pty(int id, const char *run_dir); /* RUN_DIR/NODE.tty */
void uart_open_socket(int id);                   /* RUN_DIR/NODE.sock (after uart_open_pty) */
int uart_listen_fd(int id);                      /* the socket to poll for a connection (-1: none) */
/* A connection waiting on the node's socket: it takes the line (a welcome, the node reset with
 * --arduino) or, while another holds it, is refused. At a grant point in lockstep. */
void uart_accept(int id, uint64_t now);
void uart_host_closed(int id, uint64_t gen);     /* the host closed stream `gen`: the line goes back to the pty */
int uart_host_fd(int id);                        /* where the host's bytes come from now (-1: hung up) */
int uart_host_is_socket(int id);
uint64_t uart_generation(int id);                /* the generation of the stream that holds the line */
void uart_load_script(const char *path);
void uart_arm(int id);                           /* schedule the next host byte, if any */
void uart_reset(int id);                         /* after a node's reset (cosim.after_reset) */
void uart_read_host(int id, uint64_t now);       /* host bytes written so far enter at `now` */
int uart_read_host_exactly(int id, uint64_t total, uint64_t now, int timeout_ms); /* -1: timed out */
void uart_flush_out(int id, uint64_t now);       /* output complete by `now` to the host side */
uint64_t uart_next_out(int id);                  /* cycle the oldest unwritten byte was complete (NEVER: none) */
void uart_close(int id);                         /* remove the pty link and the socket */
void uart_status_json(int id, struct sbuf *b);   /* a node's "tty","pts","uart":{...} in the status */
/* Reads the host's rate from the pty's termios: force (lockstep, before a grant: the host changes its
 * rate only between grants, so the grant runs at exactly that one), else at most once a millisecond of
 * wall time (paced: one ioctl, not one per byte). A socket says its rate in its packets: not polled. */
void uart_poll_host_baud(int id, int force);
uint64_t uart_line_baud(int id);   /* the host line's rate: the adapter's, or --baud without a pty */
double uart_node_baud(int id);     /* the node's UART rate, as its image set it (bits per second) */
/* faults (faults.c has the commands) */
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
/* a byte whose stop bit ends now (simavr timing: handed to the receiver now), traced at the node's
 * cycle `at` (in global time) */
void uart_deliver_now(int id, uint8_t b, uint64_t at);

/* the host's bytes still queued behind an injected delay (1: some), for the `injected` reply (faulthold.c) */
int uart_queued_held(int id, uint64_t *gen, uint64_t *first, uint64_t *n, uint64_t *held_cycles);

#endif

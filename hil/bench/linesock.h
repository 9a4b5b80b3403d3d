/*
 * A node's serial line on a Unix socket (RUN_DIR/NODE.sock), beside its pty: the packets and the
 * socket calls, nothing of the line itself (uart_host.c decides which host side holds the line).
 * linesock.c says why the socket, and docs/bench.md, "The line sockets", the packets.
 */
#ifndef MMBENCH_LINESOCK_H
#define MMBENCH_LINESOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The first byte of every packet: what it is (docs/bench.md, "The line sockets") */
#define LINESOCK_HELLO 'H' /* bench -> host on accept: 'H' generation(u64 LE) baud(u32 LE): the line is yours */
#define LINESOCK_BUSY 'X'  /* bench -> host on accept: 'X' words: another connection holds the line; closed */
#define LINESOCK_DATA 'D'  /* bench -> host: 'D' bytes; host -> bench: 'D' baud(u32 LE) bytes */
#define LINESOCK_BAUD 'B'  /* host -> bench: 'B' baud(u32 LE): the host set its port's rate */
#define LINESOCK_MAX 4096  /* the largest packet either side sends (a frame is at most 258 bytes) */

/* A listening SOCK_SEQPACKET socket at `path`, mode 0600, non-blocking; dies on failure (exit 2). */
int linesock_listen(const char *path);
/* A waiting connection (non-blocking, close-on-exec), or -1: none. */
int linesock_accept(int listen_fd);
/* On accept: the welcome that hands the line over, or the refusal (then the caller closes). */
void linesock_welcome(int fd, uint64_t generation, uint32_t baud);
void linesock_refuse(int fd, const char *why);

/* One packet from the host: its data bytes into `buf` (returns how many, > 0, and the rate they were
 * written at in *baud), or a rate of its own (returns 0, *baud set). -1: nothing waiting; -2: the host
 * closed (or the socket failed); -3: a malformed packet, counted and dropped (linesock_malformed). */
ssize_t linesock_recv(int fd, uint8_t *buf, size_t cap, uint32_t *baud);
/* The node's output as one packet: n bytes (at most LINESOCK_MAX - 1) sent, 0: the socket is full (the
 * host is not reading; try again later), -1: the host is gone. Never waits. */
ssize_t linesock_send(int fd, const uint8_t *b, size_t n);
uint64_t linesock_malformed(void); /* packets from hosts that were not as above */

#endif

/*
 * The control channel: a Unix socket (RUN_DIR/control.sock), one text command per line, one JSON
 * line per reply (control.c has the commands).
 */
#ifndef MMBENCH_CONTROL_H
#define MMBENCH_CONTROL_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>

#include "bench.h"

#define MAX_CLIENTS 8

/* set by the stop command and by SIGINT/SIGTERM/SIGHUP (main.c): the main loop ends */
extern volatile sig_atomic_t bench_stop;

void control_open(const char *run_dir);
const char *control_sock_path(void);
int control_pollfds(struct pollfd *pfd); /* the listening socket and the clients; returns how many */
void control_service(void);              /* accept, read and answer what is there */
void control_status_json(struct sbuf *b);
void control_close(void);
void control_reply(int fd, const char *text, size_t len); /* a reply, later (lockstep) or now */
void control_replyf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* no strings from outside in fmt's %s */
void control_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));  /* {"ok":false,"error":"..."} escaped */

#endif

/*
 * The control channel's server: a Unix socket (RUN_DIR/control.sock), one text command per line, one
 * JSON line per reply (control.c says how clients are kept). What the commands are and do is a table
 * handed over at set-up (commands.c); a command's handler builds its reply, and the server sends it.
 */
#ifndef MMBENCH_CONTROL_H
#define MMBENCH_CONTROL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define MAX_CLIENTS 8
#define CONTROL_POLLFDS (2 + MAX_CLIENTS) /* control_pollfds fills at most this many */

/* One command line as its handler sees it. */
struct command_req {
    uint64_t client;   /* who sent it: where a later reply goes (control_reply_later) */
    char *args;        /* the line after the command's name */
    char w[6][128];    /* its first words, w[0] the name (empty where the line has fewer) */
    int nw;
    /* set by the handler: */
    int later;         /* no reply now: it comes with control_reply_later */
    long stall_ms;     /* stall the bench's thread this long once the replies are out */
};

/* builds the reply (one JSON line) into `reply` */
typedef void (*command_fn)(struct command_req *req, struct sbuf *reply);

struct command {
    const char *name;
    command_fn fn;
    int whole_line; /* its arguments are the rest of the line, not words (they may be longer) */
};

/* Called after each command ran, with its line (as received) and its reply: the record of the commands
 * that change the simulation (commands.c) is kept above the server, which only hands them over. */
typedef void (*command_done_fn)(const char *name, const char *line, const char *reply, size_t n);

/* the table ends with a NULL name */
void control_open(const char *run_dir, const struct command *table, command_done_fn done);
const char *control_sock_path(void);
int control_pollfds(struct pollfd *pfd); /* the listening socket, the clients and the wake-up pipe; returns how many */
void control_service(void);              /* accept, read and answer what is there */
/* The reply a handler left for later (req.later), when it is ready; dropped if the client has gone.
 * Until then the client is not evicted to make room for a newcomer. */
void control_reply_later(uint64_t client, const char *text, size_t len);
void control_clients_json(struct sbuf *b); /* "control":{...}, for the status */
void control_close(void);

#endif

/*
 * The control channel's server (control.h): the socket, its clients, their lines and replies. The
 * commands are commands.c's table; each handler returns its reply and the server sends it, so nothing
 * a command does calls back in here (a grant's reply, which comes when the grant has run, goes through
 * control_reply_later).
 *
 * Clients (at most MAX_CLIENTS) never stall the simulation: their sockets are non-blocking and each
 * has a bounded reply buffer (CLIENT_OUT_MAX); a client that would overflow it is dropped
 * (status control.dropped_clients). A newcomer finding the table full takes the place of the client
 * idle longest (no command for over 1 s of wall time: control.evicted_clients); if none is idle it
 * gets {"ok":false,"error":"too many control clients ..."} and is closed (control.refused_clients).
 * Lockstep grant replies go the same way (a client owed a later reply is never evicted meanwhile).
 * Each connection has an id of its own, never reused, so a later reply to a client that has gone is
 * dropped rather than written to a newcomer that got its descriptor number.
 */
#define _GNU_SOURCE
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A client's replies go out through its own bounded buffer, never by waiting on it: a client that
 * stops reading once stalled the whole simulation in a blocking reply (6 s of lag seen). */
#define CLIENT_OUT_MAX (16u << 20) /* bytes of unread replies a client may owe: 16 MiB (a status is a few KB; a
                                   * `timing` reply of a 30-minute paced run a few MB) */
#define CLIENT_IDLE_NS 1000000000ull /* a full table makes room by dropping a client idle this long */
/* No client may take the bench's time. A client that sends commands without reading the replies (a
 * `status` flood: the paced bench's lag went from 6 to 63-90 ms before it reached CLIENT_OUT_MAX and was
 * dropped) gets no more commands served once CLIENT_BACKLOG bytes of replies wait for it: its lines wait
 * in its socket, which fills, and the client's own writes block (backpressure, nothing lost). And one
 * service of the channel handles commands for at most CONTROL_SLICE_NS of wall time, the clients taken
 * in turn from a rotating first one, so a client that reads as fast as it asks still leaves the
 * simulation its time. Lines left for later are served at the next service, which a byte in the
 * channel's own wake-up pipe makes come at once (whoever waits polls it with the sockets): a lockstep
 * client that sent several lines and waits for their replies is never left waiting on a bench asleep. */
#define CLIENT_BACKLOG (256u << 10)
#define CONTROL_SLICE_NS 500000ull

struct client {
    int fd;
    uint64_t id; /* its connection's id (control_reply_later), from 1 */
    char buf[1024];
    size_t n;
    char *out; /* replies not yet taken by the socket */
    size_t out_n, out_cap;
    uint64_t last_ns; /* wall time of its last command (or of its connection) */
    int dead;         /* dropped: replies are discarded, closed at the end of control_service */
    int owed;         /* a reply is owed to it later (a grant): not evicted meanwhile */
    int eof;          /* it closed its side: its lines are still served and its replies sent, then it is closed */
};

/* the channel's socket and its clients: one channel per bench */
static struct {
    int listen_fd;
    char sock_path[512];
    const struct command *table;
    command_done_fn done;
    struct client clients[MAX_CLIENTS];
    uint64_t next_id;
    long sleep_ms; /* the sleep command: a host stall on demand, once the replies are out */
    uint64_t dropped_clients, evicted_clients, refused_clients;
    uint64_t deferred; /* services that left a client's commands for later (backlog or slice used up) */
    int first;         /* the client served first in the next service (round robin) */
    int wake[2];       /* a pipe: readable while lines are left for the next service */
} control_channel = {.listen_fd = -1, .wake = {-1, -1}};

static void drop_client(struct client *c)
{
    if (!c->dead) {
        c->dead = 1;
        c->out_n = 0;
    }
}

/* Writes what the socket takes now (never waits). */
static void client_flush(struct client *c)
{
    size_t off = 0;
    while (off < c->out_n) {
        ssize_t w = write(c->fd, c->out + off, c->out_n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0) { /* gone (EPIPE, ECONNRESET): nobody to tell */
            drop_client(c);
            return;
        }
        off += (size_t)w;
    }
    memmove(c->out, c->out + off, c->out_n - off);
    c->out_n -= off;
}

/* A reply: into the client's buffer and out as far as the socket takes it; a client whose unread
 * replies would pass CLIENT_OUT_MAX is dropped (control.dropped_clients) rather than waited for. */
static void reply(struct client *c, const char *text, size_t len)
{
    if (c->dead)
        return;
    if (c->out_n + len > CLIENT_OUT_MAX) {
        control_channel.dropped_clients++;
        logmsg("control client dropped: %zu bytes of replies unread", c->out_n);
        drop_client(c);
        return;
    }
    if (c->out_n + len > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_n + len)
            cap *= 2;
        c->out = realloc(c->out, cap);
        if (!c->out)
            die("out of memory");
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_n, text, len);
    c->out_n += len;
    client_flush(c);
}

void control_reply_later(uint64_t client, const char *text, size_t len)
{
    int i;
    for (i = 0; i < MAX_CLIENTS; i++)
        if (control_channel.clients[i].fd && control_channel.clients[i].id == client) {
            control_channel.clients[i].owed = 0;
            reply(&control_channel.clients[i], text, len);
            return;
        }
    /* gone (dropped or evicted): the grant ran on, nobody to tell */
}

/* One line: its command from the table (whole-line commands by the line's start, the others by its
 * first word); a blank line has no reply. */
static void handle_line(struct client *c, char *line)
{
    struct command_req req;
    const struct command *cmd;
    struct sbuf b = {0};
    memset(&req, 0, sizeof req);
    req.client = c->id;
    for (cmd = control_channel.table; cmd->name; cmd++) {
        size_t k = strlen(cmd->name);
        if (cmd->whole_line && !strncmp(line, cmd->name, k) && (line[k] == ' ' || line[k] == '\t' || !line[k])) {
            req.args = line + k;
            break;
        }
    }
    if (!cmd->name) {
        req.nw = sscanf(line, "%127s %127s %127s %127s %127s %127s", req.w[0], req.w[1], req.w[2], req.w[3],
                        req.w[4], req.w[5]);
        if (req.nw <= 0)
            return;
        for (cmd = control_channel.table; cmd->name; cmd++)
            if (!cmd->whole_line && !strcmp(req.w[0], cmd->name))
                break;
    }
    if (cmd->name) {
        char copy[200];
        snprintf(copy, sizeof copy, "%s", line);   /* (a handler may write into the line's words) */
        cmd->fn(&req, &b);
        control_channel.done(cmd->name, copy, b.p ? b.p : "", b.n);
    }
    else
        sb_error(&b, "unknown command '%s'", req.w[0]);
    if (req.later)
        c->owed = 1;
    if (b.n)
        reply(c, b.p, b.n);
    free(b.p);
    control_channel.sleep_ms += req.stall_ms;
}

/* ---- socket ------------------------------------------------------------------------------ */

void control_open(const char *run_dir, const struct command *table, command_done_fn done)
{
    struct sockaddr_un sa;
    control_channel.table = table;
    control_channel.done = done;
    snprintf(control_channel.sock_path, sizeof control_channel.sock_path, "%s/control.sock", run_dir);
    if (strlen(control_channel.sock_path) >= sizeof sa.sun_path)
        die("run directory path too long for a Unix socket: %s", control_channel.sock_path);
    unlink(control_channel.sock_path);
    control_channel.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (control_channel.listen_fd < 0)
        die("socket: %s", strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", control_channel.sock_path);
    if (bind(control_channel.listen_fd, (struct sockaddr *)&sa, sizeof sa) || listen(control_channel.listen_fd, 4))
        die("cannot listen on %s: %s", control_channel.sock_path, strerror(errno));
    if (pipe2(control_channel.wake, O_NONBLOCK | O_CLOEXEC))
        die("pipe: %s", strerror(errno));
}

const char *control_sock_path(void)
{
    return control_channel.sock_path;
}

int control_pollfds(struct pollfd *pfd)
{
    int n = 0, i;
    pfd[n++] = (struct pollfd){control_channel.listen_fd, POLLIN, 0};
    pfd[n++] = (struct pollfd){control_channel.wake[0], POLLIN, 0};
    for (i = 0; i < MAX_CLIENTS; i++)
        if (control_channel.clients[i].fd) {
            /* a client with a backlog is not read (POLLIN would wake the bench for nothing) until it reads */
            const struct client *c = &control_channel.clients[i];
            short ev = (short)((c->out_n > CLIENT_BACKLOG || c->eof ? 0 : POLLIN) | (c->out_n ? POLLOUT : 0));
            pfd[n++] = (struct pollfd){control_channel.clients[i].fd, ev, 0};
        }
    return n;
}

static void free_client(struct client *c)
{
    close(c->fd);
    free(c->out);
    memset(c, 0, sizeof *c);
}

/* A newcomer and a full table: the client idle longest (no command for over CLIENT_IDLE_NS of wall
 * time; never one owed a reply, as a grant's client while the grant runs) makes room; if none is idle
 * the newcomer is refused with a JSON error line. (Eight idle clients once locked everyone out.) */
static void accept_clients(void)
{
    int i;
    for (;;) {
        uint64_t now;
        struct client *slot = NULL, *idle = NULL;
        int fd = accept4(control_channel.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            break;
        now = mono_ns();
        for (i = 0; i < MAX_CLIENTS && !slot; i++)
            if (!control_channel.clients[i].fd)
                slot = &control_channel.clients[i];
        if (!slot) {
            for (i = 0; i < MAX_CLIENTS; i++) {
                struct client *c = &control_channel.clients[i];
                if (c->dead || c->owed || now - c->last_ns <= CLIENT_IDLE_NS)
                    continue;
                if (!idle || c->last_ns < idle->last_ns)
                    idle = c;
            }
            if (idle) {
                control_channel.evicted_clients++;
                free_client(idle);
                slot = idle;
            }
        }
        if (!slot) {
            struct sbuf b = {0};
            control_channel.refused_clients++;
            sb_error(&b, "too many control clients (%d, none idle for 1 s): try again", MAX_CLIENTS);
            if (write(fd, b.p, b.n) < 0) { /* one try, never a wait */
            }
            free(b.p);
            close(fd);
            continue;
        }
        slot->fd = fd;
        slot->id = ++control_channel.next_id;
        slot->last_ns = now;
    }
}

void control_service(void)
{
    int j, left = 0;
    uint64_t start = mono_ns();
    char drain[16];
    while (read(control_channel.wake[0], drain, sizeof drain) > 0)
        ;
    accept_clients();
    for (j = 0; j < MAX_CLIENTS; j++) {
        int i = (control_channel.first + j) % MAX_CLIENTS;
        struct client *c = &control_channel.clients[i];
        ssize_t k;
        char *nl;
        if (!c->fd || c->dead)
            continue;
        if (c->out_n)
            client_flush(c);
        if (c->out_n > CLIENT_BACKLOG || mono_ns() - start > CONTROL_SLICE_NS) {
            control_channel.deferred++; /* its lines wait: in its buffer, then in its socket */
            continue;
        }
        if (!c->eof && !strchr(c->buf, '\n')) { /* lines left from a slice used up go first */
            k = read(c->fd, c->buf + c->n, sizeof c->buf - 1 - c->n);
            if (k == 0)
                c->eof = 1; /* `printf 'status\n' | nc -U`: the reply is still owed */
            else if (k < 0 && errno != EAGAIN && errno != EINTR) {
                drop_client(c);
                continue;
            }
            if (k > 0)
                c->n += (size_t)k;
            c->buf[c->n] = 0;
        }
        while (!c->dead && (nl = strchr(c->buf, '\n'))) {
            *nl = 0;
            c->last_ns = mono_ns();
            handle_line(c, c->buf);
            memmove(c->buf, nl + 1, c->n - (size_t)(nl + 1 - c->buf) + 1);
            c->n -= (size_t)(nl + 1 - c->buf);
            if (c->out_n > CLIENT_BACKLOG || mono_ns() - start > CONTROL_SLICE_NS)
                break;
        }
        if (!c->dead && c->n == sizeof c->buf - 1 && !strchr(c->buf, '\n')) {
            struct sbuf b = {0};
            sb_error(&b, "line too long");
            reply(c, b.p, b.n);
            free(b.p);
            c->n = 0;
        }
    }
    control_channel.first = (control_channel.first + 1) % MAX_CLIENTS;
    for (j = 0; j < MAX_CLIENTS; j++) {
        struct client *c = &control_channel.clients[j];
        if (c->fd && c->eof && !c->dead && !c->out_n && !c->owed && !strchr(c->buf, '\n'))
            drop_client(c); /* closed its side and has every reply */
        if (c->fd && c->dead)
            free_client(c);
        else if (c->fd && c->out_n <= CLIENT_BACKLOG && strchr(c->buf, '\n'))
            left = 1; /* served next time, which the pipe brings at once */
    }
    if (left && write(control_channel.wake[1], "w", 1) < 0 && errno != EAGAIN)
        logmsg("control: wake-up pipe: %s", strerror(errno));
    if (control_channel.sleep_ms) {
        /* the bench's own thread stops, as if the host had taken the CPU away */
        struct timespec ts = {control_channel.sleep_ms / 1000, (control_channel.sleep_ms % 1000) * 1000000L};
        control_channel.sleep_ms = 0;
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
    }
}

void control_clients_json(struct sbuf *b)
{
    int i, n = 0;
    size_t owed = 0;
    for (i = 0; i < MAX_CLIENTS; i++)
        if (control_channel.clients[i].fd && !control_channel.clients[i].dead) {
            n++;
            owed += control_channel.clients[i].out_n;
        }
    sb_printf(b, "\"control\":{\"clients\":%d,\"out_buffered\":%zu,\"dropped_clients\":%" PRIu64
                 ",\"evicted_clients\":%" PRIu64 ",\"refused_clients\":%" PRIu64 ",\"deferred\":%" PRIu64 "},",
              n, owed, control_channel.dropped_clients, control_channel.evicted_clients,
              control_channel.refused_clients, control_channel.deferred);
}

void control_close(void)
{
    unlink(control_channel.sock_path);
    if (control_channel.wake[0] >= 0) {
        close(control_channel.wake[0]);
        close(control_channel.wake[1]);
    }
}

/*
 * The control channel (text commands, one per line; one JSON line per reply):
 *   status                                  virtual time, lag, nodes, UART counters, wires
 *   reset NODE [at SECONDS]                 reset a node now or at a virtual time (the RESET pin:
 *                                           MCUSR EXTRF; a watchdog reset is cosim.c's)
 *   fault NODE in|out drop|corrupt|delay|dup RATE [DELAY_US]   per-byte probability (seeded PRNG)
 *   fault clear [NODE]
 *   garbage NODE in|out COUNT               COUNT seeded random bytes onto that line now, paced
 *   hangup NODE SECONDS                     the node's pty closed (port gone), a fresh one after
 *                                           SECONDS of virtual time behind the same NODE.tty
 *   stuck LINE BIT LEVEL SECONDS            LINE timecode|event, BIT 0..7 (event: 0..3, 3 = strobe)
 *                                           or all: the receiver sees LEVEL for SECONDS
 *                                           (faults.c has the faults)
 *   cut LINE SECONDS                        LINE: profiler.uart executor.uart timecode event
 *   vcd on [FILE] | vcd off                 VCD trace of the wired ports; FILE: a plain name, created
 *                                           0600 in the run directory (default wires.vcd), never
 *                                           through a symlink
 *   exectrace on [FILE] | exectrace off     the executor trace (exectrace.h); FILE as for vcd
 *                                           (default exectrace.txt)
 *   grant CYCLE [frame] [in profiler=N executor=M]   lockstep: advance virtual time (lockstep.c)
 *   stalls [since SECONDS]                  paced: the stall intervals (pacing.c)
 *   timing [since SECONDS]                  paced: the host's bytes with their stamps (hostin.c), the
 *                                           output written late and the stall intervals (pacing.c)
 *   sleep MS                                stall the bench's thread for MS ms of wall time after
 *                                           replying (a host stall on demand, for tests)
 *   inject NODE HEX [DELAY_CYCLES]          bytes into NODE's receiver, the first start bit DELAY
 *                                           cycles after the next timecode port change (inject.c)
 *   stop
 * Commands are answered between slices, so they take effect at the current virtual time; a reset
 * at a later time and the ends of a cut, a hang-up and a stuck wire are timed actions the main loop
 * runs at their cycle (in lockstep too).
 *
 * Clients (at most MAX_CLIENTS) never stall the simulation: their sockets are non-blocking and each
 * has a bounded reply buffer (CLIENT_OUT_MAX); a client that would overflow it is dropped
 * (status control.dropped_clients). A newcomer finding the table full takes the place of the client
 * idle longest (no command for over 1 s of wall time: control.evicted_clients); if none is idle it
 * gets {"ok":false,"error":"too many control clients ..."} and is closed (control.refused_clients).
 * Lockstep grant replies go the same way (a grant's client is never idle while the grant runs).
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
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "arduino.h"
#include "cosim.h"
#include "exectrace.h"
#include "faults.h"
#include "hostin.h"
#include "inject.h"
#include "lockstep.h"
#include "pacing.h"
#include "uart_bridge.h"
#include "vcd.h"

volatile sig_atomic_t bench_stop;

/* A client's replies go out through its own bounded buffer, never by waiting on it: a client that
 * stops reading once stalled the whole simulation in a blocking reply (6 s of lag seen). */
#define CLIENT_OUT_MAX (16u << 20) /* bytes of unread replies a client may owe: 16 MiB (a status is a few KB; a
                                   * `timing` reply of a 30-minute paced run a few MB) */
#define CLIENT_IDLE_NS 1000000000ull /* a full table makes room by dropping a client idle this long */

struct client {
    int fd;
    char buf[1024];
    size_t n;
    char *out; /* replies not yet taken by the socket */
    size_t out_n, out_cap;
    uint64_t last_ns; /* wall time of its last command (or of its connection) */
    int dead;         /* dropped: replies are discarded, closed at the end of control_service */
};

/* the channel's socket and its clients: one channel per bench */
static struct {
    int listen_fd;
    char run_dir[400];
    char sock_path[512];
    struct client clients[MAX_CLIENTS];
    long sleep_ms; /* the sleep command: a host stall on demand, once the replies are out */
    uint64_t dropped_clients, evicted_clients, refused_clients;
} ctl = {.listen_fd = -1};

/* ---- status ------------------------------------------------------------------------------ */

static void control_status_clients_json(struct sbuf *b);

void control_status_json(struct sbuf *b)
{
    uint64_t wall = mono_ns() - pacing.wall_start_ns;
    uint64_t now = cosim.now_cycles;
    int i;
    double vs = (double)now / (double)F_CPU;
    /* wall_start_s: CLOCK_MONOTONIC (the host's time.monotonic()) at virtual time 0, so the host can
     * place the virtual-time stall intervals on its own clock (per-event validity, paced runs). */
    sb_printf(b, "{\"ok\":true,\"virtual_s\":%.9f,\"cycle\":%" PRIu64 ",\"paced\":%s,\"wall_s\":%.6f,"
                 "\"wall_start_s\":%.9f,\"speed\":%.4f,",
              vs, now, pacing.paced ? "true" : "false", (double)wall / 1e9,
              (double)pacing.wall_start_ns / 1e9, wall ? vs / ((double)wall / 1e9) : 0.0);
    pacing_status_json(b, now);
    hostin_status_json(b);
    sb_printf(b, "\"lockstep\":%s,\"valid\":%s,", lockstep.on ? "true" : "false", pacing_valid() ? "true" : "false");
    sb_printf(b, "\"arduino\":%s,\"bootloader\":", arduino.on ? "true" : "false");
    sb_json_str(b, arduino.on ? arduino.bootloader : "");
    sb_printf(b, ",\"unconnected\":[%s%s%s],\"noise_changes\":{\"%s\":%" PRIu64 ",\"%s\":%" PRIu64 "},\"nodes\":{",
              cosim.unconnected[0] ? "\"timecode\"" : "", cosim.unconnected[0] && cosim.unconnected[1] ? "," : "",
              cosim.unconnected[1] ? "\"event\"" : "", group_names[0], cosim.noise_changes[0], group_names[1],
              cosim.noise_changes[1]);
    for (i = 0; i < NNODES; i++) {
        struct node *n = cosim.nodes[i];
        struct uart_node *u = &uart.n[i];
        uint64_t in_ok = u->in_delivered, in_ignored = u->in_ignored, lost;
        if (!n)
            continue; /* one-node mode */
        /* cycle: the node's own (its crystal: ppm); everything else in the status is global */
        sb_printf(b, "%s\"%s\":{\"kind\":\"%s\",\"clock_hz\":%" PRIu64 ",\"cycle\":%" PRIu64 ",\"ppm\":%d,",
                  b->p[b->n - 1] == '{' ? "" : ",", n->name, n->kind, n->hz, n->ops->cycle(n), cosim.ppm[i]);
        n->ops->status_json(n, b);
        /* host bytes the core lost itself (ucsim: the start bit came with the receiver off), though the
         * bridge counted them delivered when it put them on the line */
        lost = n->ops->uart_rx_lost(n);
        in_ignored += lost;
        in_ok = in_ok > lost ? in_ok - lost : 0;
        sb_printf(b, "\"tty\":");
        sb_json_str(b, u->link);
        sb_printf(b, ",\"pts\":");
        sb_json_str(b, u->pts);
        sb_printf(b, ",\"uart\":{\"in\":%" PRIu64 ",\"in_queued\":%zu,\"in_read\":%" PRIu64
                     ",\"in_ignored\":%" PRIu64 ",\"out\":%" PRIu64 ",\"out_written\":%" PRIu64 ",\"out_buffered\":%zu,"
                     "\"out_dropped\":%" PRIu64 ",\"first_in_cycle\":%" PRIu64 ",\"last_in_cycle\":%" PRIu64
                     ",\"fault_dropped\":[%" PRIu64 ",%" PRIu64 "],\"fault_corrupted\":[%" PRIu64 ",%" PRIu64
                     "],\"fault_delayed\":[%" PRIu64 ",%" PRIu64 "],\"cut_dropped\":[%" PRIu64 ",%" PRIu64 "],"
                     "\"fault_duplicated\":[%" PRIu64 ",%" PRIu64 "],\"garbage_bytes\":[%" PRIu64 ",%" PRIu64 "],"
                     "\"hangups\":%" PRIu64 ",\"hangup_dropped\":%" PRIu64 ",\"hung_up\":%s,\"pty_generation\":%" PRIu64
                     ",\"host_baud\":%" PRIu64 ",\"node_baud\":%.0f,\"host_baud_changes\":%" PRIu64
                     ",\"baud_mismatch_dropped\":[%" PRIu64 ",%" PRIu64 "]}",
                  in_ok, u->inq_n, u->in_read, in_ignored, u->out_bytes, u->out_written, u->out_n,
                  u->out_dropped, u->first_in_cycle, u->last_in_cycle, u->f_dropped[0], u->f_dropped[1],
                  u->f_corrupted[0], u->f_corrupted[1], u->f_delayed[0], u->f_delayed[1], u->cut_dropped[0],
                  u->cut_dropped[1], u->f_duplicated[0], u->f_duplicated[1], u->garbage_bytes[0], u->garbage_bytes[1],
                  u->hangups, u->hangup_dropped, u->hung ? "true" : "false", u->pty_generation,
                  uart_line_baud(i), uart_node_baud(i), u->host_baud_changes, u->baud_mismatch_dropped[0],
                  u->baud_mismatch_dropped[1]);
        if (arduino.on)
            sb_printf(b, ",\"open_resets\":%" PRIu64 ",\"bootloader_bytes\":%u,\"baud_mismatch_garbled\":%" PRIu64,
                      arduino.open_resets[i], (unsigned)arduino.boot_bytes[i], u->baud_mismatch_garbled);
        sb_printf(b, "}"); /* the node's object */
    }
    sb_printf(b, "},");
    control_status_clients_json(b);
    inject_status_json(b);
    sb_printf(b, "\"wires\":{\"changes\":%" PRIu64 ",\"cut_dropped\":%" PRIu64 ",\"rewinds\":%" PRIu64
                 ",\"max_rewind_cycles\":%" PRIu64 ",\"stuck_changes_masked\":%" PRIu64 "},\"vcd\":",
              cosim.wire_changes, cosim.wire_cut_dropped, cosim.wire_rewinds, cosim.wire_max_skew,
              cosim.wire_stuck_masked);
    if (vcd_is_open())
        sb_json_str(b, vcd_path());
    else
        sb_printf(b, "null");
    sb_printf(b, ",\"exectrace\":");
    if (exectrace_is_open())
        sb_json_str(b, exectrace_path());
    else
        sb_printf(b, "null");
    sb_printf(b, ",\"exectrace_records\":%" PRIu64 ",\"run_dir\":", exectrace_records());
    sb_json_str(b, ctl.run_dir);
    sb_printf(b, "}\n");
}

/* ---- commands ---------------------------------------------------------------------------- */

static struct client *client_of(int fd)
{
    int i;
    for (i = 0; i < MAX_CLIENTS; i++)
        if (ctl.clients[i].fd == fd && fd > 0)
            return &ctl.clients[i];
    return NULL;
}

static void drop_client(struct client *c)
{
    if (!c->dead) {
        c->dead = 1;
        c->out_n = 0;
        lockstep_client_gone(c->fd);
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
void control_reply(int fd, const char *text, size_t len)
{
    struct client *c = client_of(fd);
    if (!c) {
        /* not a client in the table (the refused newcomer): one try, never a wait */
        if (write(fd, text, len) < 0) {
        }
        return;
    }
    if (c->dead)
        return;
    if (c->out_n + len > CLIENT_OUT_MAX) {
        ctl.dropped_clients++;
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

static void reply(int fd, const char *text)
{
    control_reply(fd, text, strlen(text));
}

void control_replyf(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    reply(fd, buf);
}

/* An error reply: the message (which may hold words from the command) as one escaped JSON string. */
void control_error(int fd, const char *fmt, ...)
{
    char msg[768];
    struct sbuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sb_printf(&b, "{\"ok\":false,\"error\":");
    sb_json_str(&b, msg);
    sb_printf(&b, "}\n");
    reply(fd, b.p);
    free(b.p);
}

/* a cut line group's end: the destinations see what the sources drive now */
static void cut_end(int group, uint64_t now)
{
    cosim_resync_wires(group, -1, now);
}

static void cmd_cut(int fd, char w[][128], int nw)
{
    double s = atof(w[2]);
    uint64_t until = cosim.now_cycles + secs_to_cycles(s);
    int g, id = -1;
    if (nw < 3 || s <= 0) {
        reply(fd, "{\"ok\":false,\"error\":\"usage: cut LINE SECONDS (LINE: profiler.uart executor.uart timecode event)\"}\n");
        return;
    }
    for (g = 0; g < NGROUPS; g++)
        if (!strcmp(w[1], group_names[g]))
            break;
    if (g < NGROUPS) {
        cosim.group_cut_until[g] = until;
        actions_add(until, cut_end, g);
    } else {
        if (!strcmp(w[1], "profiler.uart"))
            id = PROFILER;
        else if (!strcmp(w[1], "executor.uart"))
            id = EXECUTOR;
        if (id < 0) {
            control_error(fd, "cut: unknown line '%s'", w[1]);
            return;
        }
        uart.n[id].uart_cut_until = until;
    }
    control_replyf(fd, "{\"ok\":true,\"line\":\"%s\",\"until_cycle\":%" PRIu64 "}\n", id >= 0 ? w[1] : group_names[g], until); /* a known name: nothing to escape */
}

static void reply_path(int fd, const char *key, const char *path)
{
    struct sbuf b = {0};
    sb_printf(&b, "{\"ok\":true,\"%s\":", key);
    sb_json_str(&b, path);
    sb_printf(&b, "}\n");
    reply(fd, b.p);
    free(b.p);
}

/* A trace file named by a control command (`vcd on FILE`, `exectrace on FILE`) comes from whoever
 * holds the socket, so it may only name a plain file in the run directory: no '/', no "..", and the
 * file is opened with O_NOFOLLOW (a symlink planted under that name once made the bench truncate the
 * file it pointed to), created 0600, and must be a regular file. (--vcd PATH and --exec-trace PATH
 * are the user's own options and may be any path.) Returns the open file with its path in `path`,
 * or NULL after replying with the reason. */
static FILE *open_in_run_dir(int fd, const char *cmd, const char *name, char *path, size_t pathsz)
{
    int vfd;
    FILE *f;
    struct stat st;
    if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
        control_error(fd, "%s: '%s' refused: FILE must be a plain file name inside the run directory (no '/', not '.' or '..')", cmd, name);
        return NULL;
    }
    snprintf(path, pathsz, "%s/%s", ctl.run_dir, name);
    vfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (vfd < 0) {
        if (errno == ELOOP)
            control_error(fd, "%s: '%s' refused: it exists as a symlink", cmd, name);
        else
            control_error(fd, "%s: cannot open '%s': %s", cmd, name, strerror(errno));
        return NULL;
    }
    if (fstat(vfd, &st) || !S_ISREG(st.st_mode)) {
        close(vfd); /* a FIFO or device planted under that name */
        control_error(fd, "%s: '%s' refused: not a regular file", cmd, name);
        return NULL;
    }
    fcntl(vfd, F_SETFL, fcntl(vfd, F_GETFL) & ~O_NONBLOCK);
    f = fdopen(vfd, "w");
    if (!f) {
        close(vfd);
        control_error(fd, "%s: cannot open '%s': %s", cmd, name, strerror(errno));
    }
    return f;
}

static void cmd_vcd(int fd, char w[][128], int nw)
{
    if (!cosim.wired) {
        control_error(fd, "vcd: no wires in one-node mode");
    } else if (!strcmp(w[1], "on")) {
        char path[600];
        FILE *f = open_in_run_dir(fd, "vcd", nw >= 3 ? w[2] : "wires.vcd", path, sizeof path);
        if (!f)
            return;
        vcd_start(f, path, cosim.now_cycles);
        reply_path(fd, "vcd", vcd_path());
    } else if (!strcmp(w[1], "off")) {
        vcd_close(cosim.now_cycles);
        reply_path(fd, "vcd", vcd_path());
    } else {
        control_error(fd, "usage: vcd on [FILE] | vcd off");
    }
}

/* the executor trace (exectrace.h); the same rules for FILE as `vcd on` */
static void cmd_exectrace(int fd, char w[][128], int nw)
{
    if (!cosim.wired) {
        control_error(fd, "exectrace: two-node mode only");
    } else if (!strcmp(w[1], "on")) {
        char path[600];
        FILE *f = open_in_run_dir(fd, "exectrace", nw >= 3 ? w[2] : "exectrace.txt", path, sizeof path);
        if (!f)
            return;
        exectrace_start(f, path, global_to_node(EXECUTOR, cosim.now_cycles)); /* the executor's clock */
        reply_path(fd, "exectrace", exectrace_path());
    } else if (!strcmp(w[1], "off")) {
        exectrace_close(global_to_node(EXECUTOR, cosim.now_cycles));
        reply_path(fd, "exectrace", exectrace_path());
    } else {
        control_error(fd, "usage: exectrace on [FILE] | exectrace off");
    }
}

static void handle_command(int fd, char *line)
{
    char w[6][128];
    int nw;
    if (!strncmp(line, "grant", 5) && (line[5] == ' ' || line[5] == '\t' || !line[5])) {
        lockstep_grant(fd, line + 5);
        return;
    }
    if (!strncmp(line, "inject", 6) && (line[6] == ' ' || line[6] == '\t' || !line[6])) {
        inject_command(fd, line + 6); /* its HEX may be longer than a word below */
        return;
    }
    memset(w, 0, sizeof w);
    nw = sscanf(line, "%127s %127s %127s %127s %127s %127s", w[0], w[1], w[2], w[3], w[4], w[5]);
    if (nw <= 0)
        return;
    if (!strcmp(w[0], "status")) {
        struct sbuf b = {0};
        control_status_json(&b);
        reply(fd, b.p);
        free(b.p);
    } else if (!strcmp(w[0], "stop")) {
        bench_stop = 1;
        reply(fd, "{\"ok\":true}\n");
    } else if (!strcmp(w[0], "reset")) {
        int id = parse_node(w[1]);
        if (id < 0 || !cosim_present(id)) {
            control_error(fd, "reset: unknown node '%s'", w[1]);
        } else if (nw >= 4 && !strcmp(w[2], "at")) {
            uint64_t at = secs_to_cycles(atof(w[3]));
            if (at < cosim.now_cycles)
                at = cosim.now_cycles;
            if (actions_add(at, cosim_external_reset, id))
                reply(fd, "{\"ok\":false,\"error\":\"too many pending actions\"}\n");
            else
                control_replyf(fd, "{\"ok\":true,\"at_cycle\":%" PRIu64 "}\n", at);
        } else {
            cosim_external_reset(id, cosim.now_cycles);
            control_replyf(fd, "{\"ok\":true,\"at_cycle\":%" PRIu64 "}\n", cosim.now_cycles);
        }
    } else if (faults_command(fd, w, nw)) {
        /* fault, garbage, hangup, stuck: faults.c */
    } else if (!strcmp(w[0], "cut")) {
        cmd_cut(fd, w, nw);
    } else if (!strcmp(w[0], "vcd")) {
        cmd_vcd(fd, w, nw);
    } else if (!strcmp(w[0], "exectrace")) {
        cmd_exectrace(fd, w, nw);
    } else if (!strcmp(w[0], "stalls")) {
        struct sbuf b = {0};
        uint64_t since = nw >= 3 && !strcmp(w[1], "since") ? secs_to_cycles(atof(w[2])) : 0;
        sb_printf(&b, "{\"ok\":true,\"virtual_s\":%.9f,", (double)cosim.now_cycles / (double)F_CPU);
        pacing_stalls_json(&b, since, cosim.now_cycles);
        sb_printf(&b, "}\n");
        reply(fd, b.p);
        free(b.p);
    } else if (!strcmp(w[0], "timing")) {
        /* paced: what validity by cause looks up (mmsched/validity.py): the host's bytes with their stamps,
         * the output written late, the stall intervals; each from `since` virtual seconds on */
        struct sbuf b = {0};
        double s = nw >= 3 && !strcmp(w[1], "since") ? atof(w[2]) : 0.0;
        uint64_t since = secs_to_cycles(s);
        sb_printf(&b, "{\"ok\":true,\"virtual_s\":%.9f,\"wall_start_s\":%.9f,\"paced\":%s,",
                  (double)cosim.now_cycles / (double)F_CPU, (double)pacing.wall_start_ns / 1e9,
                  pacing.paced ? "true" : "false");
        hostin_record_json(&b, s > 0 ? (uint64_t)(s * 1e9) : 0);
        sb_printf(&b, ",");
        pacing_held_json(&b, since);
        sb_printf(&b, ",");
        pacing_stalls_json(&b, since, cosim.now_cycles);
        sb_printf(&b, "}\n");
        reply(fd, b.p);
        free(b.p);
    } else if (!strcmp(w[0], "sleep")) {
        long ms = atol(w[1]);
        if (nw < 2 || ms < 0 || ms > 60000) {
            reply(fd, "{\"ok\":false,\"error\":\"usage: sleep MS (0..60000)\"}\n");
        } else {
            ctl.sleep_ms += ms;
            control_replyf(fd, "{\"ok\":true,\"cycle\":%" PRIu64 ",\"virtual_s\":%.9f,\"sleep_ms\":%ld}\n",
                           cosim.now_cycles, (double)cosim.now_cycles / (double)F_CPU, ms);
        }
    } else {
        control_error(fd, "unknown command '%s'", w[0]);
    }
}

/* ---- socket ------------------------------------------------------------------------------ */

void control_open(const char *run_dir)
{
    struct sockaddr_un sa;
    snprintf(ctl.run_dir, sizeof ctl.run_dir, "%s", run_dir);
    snprintf(ctl.sock_path, sizeof ctl.sock_path, "%s/control.sock", run_dir);
    if (strlen(ctl.sock_path) >= sizeof sa.sun_path)
        die("run directory path too long for a Unix socket: %s", ctl.sock_path);
    unlink(ctl.sock_path);
    ctl.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ctl.listen_fd < 0)
        die("socket: %s", strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", ctl.sock_path);
    if (bind(ctl.listen_fd, (struct sockaddr *)&sa, sizeof sa) || listen(ctl.listen_fd, 4))
        die("cannot listen on %s: %s", ctl.sock_path, strerror(errno));
}

const char *control_sock_path(void)
{
    return ctl.sock_path;
}

int control_pollfds(struct pollfd *pfd)
{
    int n = 0, i;
    pfd[n++] = (struct pollfd){ctl.listen_fd, POLLIN, 0};
    for (i = 0; i < MAX_CLIENTS; i++)
        if (ctl.clients[i].fd)
            pfd[n++] = (struct pollfd){ctl.clients[i].fd, (short)(POLLIN | (ctl.clients[i].out_n ? POLLOUT : 0)), 0};
    return n;
}

static void free_client(struct client *c)
{
    close(c->fd);
    free(c->out);
    memset(c, 0, sizeof *c);
}

/* A newcomer and a full table: the client idle longest (no command for over CLIENT_IDLE_NS of wall
 * time; never the one a grant is running for) makes room; if none is idle the newcomer is refused
 * with a JSON error line. (Eight idle clients once locked everyone out.) */
static void accept_clients(void)
{
    int i;
    for (;;) {
        uint64_t now;
        struct client *slot = NULL, *idle = NULL;
        int fd = accept4(ctl.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            break;
        now = mono_ns();
        for (i = 0; i < MAX_CLIENTS && !slot; i++)
            if (!ctl.clients[i].fd)
                slot = &ctl.clients[i];
        if (!slot) {
            for (i = 0; i < MAX_CLIENTS; i++) {
                struct client *c = &ctl.clients[i];
                if (c->dead || (lockstep.active && lockstep.fd == c->fd) || now - c->last_ns <= CLIENT_IDLE_NS)
                    continue;
                if (!idle || c->last_ns < idle->last_ns)
                    idle = c;
            }
            if (idle) {
                ctl.evicted_clients++;
                lockstep_client_gone(idle->fd);
                free_client(idle);
                slot = idle;
            }
        }
        if (!slot) {
            ctl.refused_clients++;
            control_error(fd, "too many control clients (%d, none idle for 1 s): try again", MAX_CLIENTS);
            close(fd);
            continue;
        }
        slot->fd = fd;
        slot->last_ns = now;
    }
}

void control_service(void)
{
    int i;
    accept_clients();
    for (i = 0; i < MAX_CLIENTS; i++) {
        struct client *c = &ctl.clients[i];
        ssize_t k;
        char *nl;
        if (!c->fd || c->dead)
            continue;
        if (c->out_n)
            client_flush(c);
        k = read(c->fd, c->buf + c->n, sizeof c->buf - 1 - c->n);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
            drop_client(c);
            continue;
        }
        if (k > 0)
            c->n += (size_t)k;
        c->buf[c->n] = 0;
        while (!c->dead && (nl = strchr(c->buf, '\n'))) {
            *nl = 0;
            c->last_ns = mono_ns();
            handle_command(c->fd, c->buf);
            memmove(c->buf, nl + 1, c->n - (size_t)(nl + 1 - c->buf) + 1);
            c->n -= (size_t)(nl + 1 - c->buf);
        }
        if (!c->dead && c->n == sizeof c->buf - 1) {
            control_error(c->fd, "line too long");
            c->n = 0;
        }
    }
    for (i = 0; i < MAX_CLIENTS; i++)
        if (ctl.clients[i].fd && ctl.clients[i].dead)
            free_client(&ctl.clients[i]);
    if (ctl.sleep_ms) {
        /* the bench's own thread stops, as if the host had taken the CPU away */
        struct timespec ts = {ctl.sleep_ms / 1000, (ctl.sleep_ms % 1000) * 1000000L};
        ctl.sleep_ms = 0;
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
    }
}

static void control_status_clients_json(struct sbuf *b)
{
    int i, n = 0;
    size_t owed = 0;
    for (i = 0; i < MAX_CLIENTS; i++)
        if (ctl.clients[i].fd && !ctl.clients[i].dead) {
            n++;
            owed += ctl.clients[i].out_n;
        }
    sb_printf(b, "\"control\":{\"clients\":%d,\"out_buffered\":%zu,\"dropped_clients\":%" PRIu64
                 ",\"evicted_clients\":%" PRIu64 ",\"refused_clients\":%" PRIu64 "},",
              n, owed, ctl.dropped_clients, ctl.evicted_clients, ctl.refused_clients);
}

void control_close(void)
{
    unlink(ctl.sock_path);
}

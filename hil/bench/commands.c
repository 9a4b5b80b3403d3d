/*
 * The control channel's commands: the table the server (control.c) dispatches on, and the handlers of
 * the commands that are no other part's (one text command per line, one JSON line per reply):
 *   status                                  virtual time, lag, nodes, UART counters, wires
 *   reset NODE [at SECONDS]                 reset a node now or at a virtual time (the RESET pin:
 *                                           MCUSR EXTRF; a watchdog reset is the node's:
 *                                           node_avr.c)
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
 *   injected                                the host's bytes an injected delay held back (faulthold.c)
 *   sleep MS                                stall the bench's thread for MS ms of wall time after
 *                                           replying (a host stall on demand, for tests)
 *   inject NODE HEX [DELAY_CYCLES]          bytes into NODE's receiver, the first start bit DELAY
 *                                           cycles after the next timecode port change (inject.c)
 *   stop
 * Commands are answered between slices, so they take effect at the current virtual time; a reset
 * at a later time and the ends of a cut, a hang-up and a stuck wire are timed actions (actions.c) the
 * main loop runs at their cycle (in lockstep too).
 */
#define _GNU_SOURCE
#include "commands.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions.h"
#include "cosim.h"
#include "exectrace.h"
#include "faulthold.h"
#include "faults.h"
#include "hostin.h"
#include "inject.h"
#include "lockstep.h"
#include "pacing.h"
#include "safefile.h"
#include "status.h"
#include "uart_bridge.h"
#include "vcd.h"

static void commands_log_json(struct sbuf *b);

static void cmd_status(struct command_req *r, struct sbuf *b)
{
    (void)r;
    status_json(b);
}

static void cmd_stop(struct command_req *r, struct sbuf *b)
{
    (void)r;
    bench_stop = 1;
    sb_printf(b, "{\"ok\":true}\n");
}

static void cmd_reset(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int id = parse_node(w[1]);
    if (id < 0 || !cosim_present(id)) {
        sb_error(b, "reset: unknown node '%s'", w[1]);
    } else if (r->nw >= 4 && !strcmp(w[2], "at")) {
        uint64_t at = secs_to_cycles(atof(w[3]));
        if (at < cosim_now())
            at = cosim_now();
        if (actions_add(at, cosim_external_reset, id))
            sb_printf(b, "{\"ok\":false,\"error\":\"too many pending actions\"}\n");
        else
            sb_printf(b, "{\"ok\":true,\"at_cycle\":%" PRIu64 "}\n", at);
    } else {
        cosim_external_reset(id, cosim_now());
        sb_printf(b, "{\"ok\":true,\"at_cycle\":%" PRIu64 "}\n", cosim_now());
    }
}

/* a cut line group's end: the destinations see what the sources drive now */
static void cut_end(int group, uint64_t now)
{
    cosim_resync_wires(group, -1, now);
}

static void cmd_cut(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int nw = r->nw;
    double s = atof(w[2]);
    uint64_t until = cosim_now() + secs_to_cycles(s);
    int g, id = -1;
    if (nw < 3 || s <= 0) {
        sb_printf(b, "%s", "{\"ok\":false,\"error\":\"usage: cut LINE SECONDS (LINE: profiler.uart executor.uart timecode event)\"}\n");
        return;
    }
    for (g = 0; g < NGROUPS; g++)
        if (!strcmp(w[1], group_names[g]))
            break;
    if (g < NGROUPS) {
        cosim_cut_group(g, until);
        actions_add(until, cut_end, g);
    } else {
        if (!strcmp(w[1], "profiler.uart"))
            id = PROFILER;
        else if (!strcmp(w[1], "executor.uart"))
            id = EXECUTOR;
        if (id < 0) {
            sb_error(b, "cut: unknown line '%s'", w[1]);
            return;
        }
        uart_cut(id, until);
    }
    sb_printf(b, "{\"ok\":true,\"line\":\"%s\",\"until_cycle\":%" PRIu64 "}\n", id >= 0 ? w[1] : group_names[g], until); /* a known name: nothing to escape */
}

static void reply_path(struct sbuf *b, const char *key, const char *path)
{
    sb_printf(b, "{\"ok\":true,\"%s\":", key);
    sb_json_str(b, path);
    sb_printf(b, "}\n");
}

/* A trace file named by a control command (`vcd on FILE`, `exectrace on FILE`) comes from whoever
 * holds the socket, so it may only name a plain file in the run directory: no '/', no "..". A name that
 * is a symlink or not a regular file (a FIFO, a device) is refused with its reason (a symlink planted
 * under that name once made the bench truncate the file it pointed to); the file itself is made as every
 * file of the bench is, through safefile.c (a new temporary file, renamed over FILE when the trace ends),
 * 0600. (--vcd PATH and --exec-trace PATH are the user's own options and may be any path.) Returns the
 * open file with its path in `path`, or NULL with the reason in the reply. */
static FILE *open_in_run_dir(struct sbuf *b, const char *cmd, const char *name, char *path, size_t pathsz)
{
    FILE *f;
    struct stat st;
    if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
        sb_error(b, "%s: '%s' refused: FILE must be a plain file name inside the run directory (no '/', not '.' or '..')", cmd, name);
        return NULL;
    }
    snprintf(path, pathsz, "%s/%s", bench_run_dir, name);
    if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
        sb_error(b, "%s: '%s' refused: %s", cmd, name, S_ISLNK(st.st_mode) ? "it exists as a symlink" : "not a regular file");
        return NULL;
    }
    f = sf_open(path, 0600);
    if (!f)
        sb_error(b, "%s: cannot open '%s': %s", cmd, name, sf_strerror(errno));
    return f;
}

static void cmd_vcd(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int nw = r->nw;
    if (!cosim_wired()) {
        sb_error(b, "vcd: no wires in one-node mode");
    } else if (!strcmp(w[1], "on")) {
        char path[600];
        FILE *f = open_in_run_dir(b, "vcd", nw >= 3 ? w[2] : "wires.vcd", path, sizeof path);
        if (!f)
            return;
        vcd_start(f, path, cosim_now(), cosim_wires());
        reply_path(b, "vcd", vcd_path());
    } else if (!strcmp(w[1], "off")) {
        vcd_close(cosim_now());
        reply_path(b, "vcd", vcd_path());
    } else {
        sb_error(b, "usage: vcd on [FILE] | vcd off");
    }
}

/* the executor trace (exectrace.h); the same rules for FILE as `vcd on` */
static void cmd_exectrace(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int nw = r->nw;
    if (!cosim_wired()) {
        sb_error(b, "exectrace: two-node mode only");
    } else if (!strcmp(w[1], "on")) {
        char path[600];
        FILE *f = open_in_run_dir(b, "exectrace", nw >= 3 ? w[2] : "exectrace.txt", path, sizeof path);
        if (!f)
            return;
        exectrace_start(f, path, global_to_node(EXECUTOR, cosim_now()), /* the executor's clock */
                        cosim_wires(), cosim_ppm(EXECUTOR));
        reply_path(b, "exectrace", exectrace_path());
    } else if (!strcmp(w[1], "off")) {
        exectrace_close(global_to_node(EXECUTOR, cosim_now()));
        reply_path(b, "exectrace", exectrace_path());
    } else {
        sb_error(b, "usage: exectrace on [FILE] | exectrace off");
    }
}

static void cmd_stalls(struct command_req *r, struct sbuf *b)
{
    uint64_t since = r->nw >= 3 && !strcmp(r->w[1], "since") ? secs_to_cycles(atof(r->w[2])) : 0;
    sb_printf(b, "{\"ok\":true,\"virtual_s\":%.9f,", (double)cosim_now() / (double)F_CPU);
    pacing_stalls_json(b, since, cosim_now());
    sb_printf(b, "}\n");
}

/* paced: what validity by cause looks up (mmsched/verdict/validity.py): the host's bytes with their stamps, the
 * output written late, the stall intervals; each from `since` virtual seconds on */
/* the host's bytes an injected delay held back (faulthold.c), lockstep, unpaced or paced */
static void cmd_injected(struct command_req *r, struct sbuf *b)
{
    struct faulthold_queued queued[NNODES];
    int id;
    (void)r;
    for (id = 0; id < NNODES; id++)
        uart_queued_held(id, &queued[id].gen, &queued[id].first, &queued[id].n, &queued[id].held_cycles);
    sb_printf(b, "{\"ok\":true,");
    faulthold_json(b, queued);
    sb_printf(b, "}\n");
}

static void cmd_timing(struct command_req *r, struct sbuf *b)
{
    double s = r->nw >= 3 && !strcmp(r->w[1], "since") ? atof(r->w[2]) : 0.0;
    uint64_t since = secs_to_cycles(s);
    sb_printf(b, "{\"ok\":true,\"virtual_s\":%.9f,\"wall_start_s\":%.9f,\"paced\":%s,",
              (double)cosim_now() / (double)F_CPU, (double)pacing.wall_start_ns / 1e9,
              pacing.paced ? "true" : "false");
    hostin_record_json(b, s > 0 ? (uint64_t)(s * 1e9) : 0);
    sb_printf(b, ",");
    commands_log_json(b);
    pacing_held_json(b, since);
    sb_printf(b, ",");
    pacing_stalls_json(b, since, cosim_now());
    sb_printf(b, "}\n");
}

static void cmd_sleep(struct command_req *r, struct sbuf *b)
{
    long ms = atol(r->w[1]);
    if (r->nw < 2 || ms < 0 || ms > 60000) {
        sb_printf(b, "%s", "{\"ok\":false,\"error\":\"usage: sleep MS (0..60000)\"}\n");
    } else {
        r->stall_ms = ms; /* the server stalls once the replies are out */
        sb_printf(b, "{\"ok\":true,\"cycle\":%" PRIu64 ",\"virtual_s\":%.9f,\"sleep_ms\":%ld}\n",
                  cosim_now(), (double)cosim_now() / (double)F_CPU, ms);
    }
}

/* The commands that change what the simulation does (faults, resets, cuts, injections), each with the cycle it
 * took effect at: a run's record of its inputs carries them, and a replay issues each at its cycle (docs/replay.md).
 * The last COMMAND_LOG of them are kept. */
#define COMMAND_LOG 4096
static struct {
    uint64_t cycle;
    char text[200];
} cmd_log[COMMAND_LOG];
static size_t cmd_log_head, cmd_log_n;
static uint64_t cmd_log_dropped;
static const char *const logged[] = {"reset", "fault", "garbage", "hangup", "stuck", "cut", "inject", NULL};

void commands_log(const char *name, const char *line, const char *reply, size_t n)
{
    size_t i;
    for (i = 0; logged[i] && strcmp(logged[i], name); i++) {
    }
    if (!logged[i] || n < 10 || strncmp(reply, "{\"ok\":true", 10))
        return; /* not one that changes the simulation, or refused */
    if (cmd_log_n == COMMAND_LOG) {
        cmd_log_head = (cmd_log_head + 1) % COMMAND_LOG;
        cmd_log_n--;
        cmd_log_dropped++;
    }
    i = (cmd_log_head + cmd_log_n) % COMMAND_LOG;
    cmd_log[i].cycle = cosim_now();
    snprintf(cmd_log[i].text, sizeof cmd_log[i].text, "%s", line);
    cmd_log_n++;
}

static void commands_log_json(struct sbuf *b)
{
    size_t i;
    sb_printf(b, "\"commands\":[");
    for (i = 0; i < cmd_log_n; i++) {
        const size_t k = (cmd_log_head + i) % COMMAND_LOG;
        sb_printf(b, "%s[%" PRIu64 ",", i ? "," : "", cmd_log[k].cycle);
        sb_json_str(b, cmd_log[k].text);
        sb_printf(b, "]");
    }
    sb_printf(b, "],\"commands_dropped\":%" PRIu64 ",", cmd_log_dropped);
}

const struct command commands[] = {
    {"grant", lockstep_grant, 1},  /* lockstep.c */
    {"inject", inject_command, 1}, /* inject.c: its HEX may be longer than a word */
    {"status", cmd_status, 0},
    {"stop", cmd_stop, 0},
    {"reset", cmd_reset, 0},
    {"fault", faults_fault, 0}, /* faults.c */
    {"garbage", faults_garbage, 0},
    {"hangup", faults_hangup, 0},
    {"stuck", faults_stuck, 0},
    {"cut", cmd_cut, 0},
    {"vcd", cmd_vcd, 0},
    {"exectrace", cmd_exectrace, 0},
    {"stalls", cmd_stalls, 0},
    {"timing", cmd_timing, 0},
    {"injected", cmd_injected, 0},
    {"sleep", cmd_sleep, 0},
    {NULL, NULL, 0},
};

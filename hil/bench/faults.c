/*
 * Faults, from the control channel. Byte faults draw from the bridge's seeded PRNG (--seed), so an
 * unpaced or lockstep run with the same commands at the same cycles gives the same faults; ends of
 * timed faults are timed actions (actions.c) and happen at their cycle, in lockstep too.
 *
 *   fault NODE in|out drop|corrupt|delay|dup RATE [DELAY_US]
 *       each byte in that direction is dropped, has one bit flipped, is held DELAY_US longer
 *       (default 1000), or is sent twice (the repeat follows one character later; a repeat is not
 *       repeated again), with probability RATE. Counters per node, [in, out]: uart.fault_dropped,
 *       fault_corrupted, fault_delayed, fault_duplicated.
 *   fault clear [NODE]
 *   garbage NODE in|out COUNT
 *       a burst of COUNT uniform random bytes (0x00, the frame delimiter, is one in 256) on that line,
 *       one character each at --baud: in, behind the host bytes already queued, through the receive
 *       path like a host byte; out, towards the host behind the output already queued.
 *       Counter uart.garbage_bytes [in, out].
 *   hangup NODE SECONDS
 *       the USB serial adapter pulled and put back: the node's pty is closed (the host's open port
 *       fails: pyserial reads raise SerialException, the /dev/pts entry goes once the host closes
 *       it), so is a connection to its line socket (its reader sees the end), the node's output is
 *       dropped (uart.hangup_dropped, with what was queued unread) and the simulation runs on; NODE.tty
 *       and NODE.sock are removed (as /dev/ttyUSB0 goes with the adapter: left, NODE.tty named a /dev/pts
 *       number the kernel gives the next pty, another program's); after SECONDS of virtual time a fresh
 *       pty is opened and NODE.tty made for it (symlink to a temporary name, then rename), and NODE.sock
 *       listens again. Counters uart.hangups, uart.hung_up, uart.generation (of the host stream that
 *       holds the line: each pty made and each connection taken gets the node's next). The byte counts
 *       of the lockstep handshake are per stream: in_read and out_written (a grant's `in NODE=N` and its
 *       reply's `out`) start again at 0 on the new one, and while the node is hung up its `in` count is
 *       not waited for; the grant reply carries the generation so the host can tell
 *       (mmhil.lockstep.Stepper counts per stream).
 *   stuck LINE BIT LEVEL SECONDS
 *       LINE timecode (BIT 0..7: profiler PA -> executor PK) or event (BIT 0..2 the id lines, 3 the
 *       strobe), BIT or all, LEVEL 0 or 1: the receiving core sees the wire held at LEVEL for SECONDS
 *       of virtual time, then the level the driver has by then. The driver's changes meanwhile are
 *       counted in wires.stuck_changes_masked. As `cut` on a wire group, per bit and at a level.
 */
#define _GNU_SOURCE
#include "faults.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "control.h"
#include "cosim.h"
#include "uart_bridge.h"

static int parse_dir(const char *s)
{
    return !strcmp(s, "in") ? 0 : !strcmp(s, "out") ? 1 : -1;
}

void faults_fault(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int nw = r->nw;
    int id, dir;
    double rate;
    char *end;
    if (nw >= 2 && !strcmp(w[1], "clear")) {
        int i;
        for (i = 0; i < NNODES; i++)
            if (nw < 3 || parse_node(w[2]) == i)
                uart_faults_clear(i);
        sb_printf(b, "{\"ok\":true}\n");
        return;
    }
    id = parse_node(w[1]);
    dir = parse_dir(w[2]);
    rate = strtod(w[4], &end);
    if (id < 0 || !cosim_present(id) || dir < 0 || nw < 5 || *end || !(rate >= 0 && rate <= 1)) {
        sb_error(b, "usage: fault NODE in|out drop|corrupt|delay|dup RATE [DELAY_US] (RATE 0..1)");
        return;
    }
    if (!strcmp(w[3], "drop"))
        uart_fault_set(id, dir, UART_FAULT_DROP, rate, 0);
    else if (!strcmp(w[3], "corrupt"))
        uart_fault_set(id, dir, UART_FAULT_CORRUPT, rate, 0);
    else if (!strcmp(w[3], "dup"))
        uart_fault_set(id, dir, UART_FAULT_DUP, rate, 0);
    else if (!strcmp(w[3], "delay"))
        uart_fault_set(id, dir, UART_FAULT_DELAY, rate, secs_to_cycles((nw >= 6 ? atof(w[5]) : 1000.0) / 1e6));
    else {
        sb_error(b, "fault: unknown kind '%s'", w[3]);
        return;
    }
    /* every word echoed was checked against a fixed list: nothing to escape */
    sb_printf(b, "{\"ok\":true,\"node\":\"%s\",\"dir\":\"%s\",\"kind\":\"%s\",\"rate\":%g}\n", node_names[id],
                   dir ? "out" : "in", w[3], rate);
}

void faults_garbage(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int nw = r->nw;
    int id = nw >= 2 ? parse_node(w[1]) : -1, dir = nw >= 3 ? parse_dir(w[2]) : -1;
    char *end;
    unsigned long long count = nw >= 4 ? strtoull(w[3], &end, 0) : 0;
    if (id < 0 || !cosim_present(id) || dir < 0 || nw < 4 || *end || count < 1 || count > 65536) {
        sb_error(b, "usage: garbage NODE in|out COUNT (COUNT 1..65536)");
        return;
    }
    uart_garbage(id, dir, count, cosim_now());
    sb_printf(b, "{\"ok\":true,\"node\":\"%s\",\"dir\":\"%s\",\"bytes\":%llu,\"cycle\":%" PRIu64 "}\n",
                   node_names[id], dir ? "out" : "in", count, cosim_now());
}

/* the adapter plugged in again after a hang-up */
static void hangup_end(int id, uint64_t now)
{
    (void)now;
    uart_replug(id);
}

void faults_hangup(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int nw = r->nw;
    int id = nw >= 2 ? parse_node(w[1]) : -1;
    char *end;
    double s = nw >= 3 ? strtod(w[2], &end) : 0;
    uint64_t until;
    if (id < 0 || !cosim_present(id) || nw < 3 || *end || !(s > 0)) {
        sb_error(b, "usage: hangup NODE SECONDS (SECONDS > 0)");
        return;
    }
    if (uart_hung_up(id)) {
        sb_error(b, "hangup: %s is hung up already", node_names[id]);
        return;
    }
    until = cosim_now() + secs_to_cycles(s);
    if (actions_add(until, hangup_end, id)) {
        sb_error(b, "too many pending actions");
        return;
    }
    uart_hangup(id);
    sb_printf(b, "{\"ok\":true,\"node\":\"%s\",\"cycle\":%" PRIu64 ",\"until_cycle\":%" PRIu64 "}\n",
                   node_names[id], cosim_now(), until);
}

void faults_stuck(struct command_req *r, struct sbuf *b)
{
    char(*w)[128] = r->w;
    int nw = r->nw;
    int g, bit = -1, level, n;
    char *end;
    double s;
    uint64_t until;
    if (nw < 5) {
        sb_error(b, "usage: stuck LINE BIT LEVEL SECONDS (LINE timecode|event, BIT 0..7|all, LEVEL 0|1)");
        return;
    }
    for (g = 0; g < NGROUPS; g++)
        if (!strcmp(w[1], group_names[g]))
            break;
    if (!cosim_wired() || g == NGROUPS) {
        sb_error(b, "stuck: unknown line '%s' (timecode or event, both nodes running)", w[1]);
        return;
    }
    if (strcmp(w[2], "all")) {
        bit = (int)strtol(w[2], &end, 10);
        if (*end || bit < 0 || bit > (g == GROUP_TIMECODE ? 7 : 3)) {
            sb_error(b, "stuck: bad BIT '%s' (timecode 0..7, event 0..3, or all)", w[2]);
            return;
        }
    }
    level = !strcmp(w[3], "1") ? 1 : !strcmp(w[3], "0") ? 0 : -1;
    s = strtod(w[4], &end);
    if (level < 0 || *end || !(s > 0)) {
        sb_error(b, "usage: stuck LINE BIT LEVEL SECONDS (LEVEL 0|1, SECONDS > 0)");
        return;
    }
    until = cosim_now() + secs_to_cycles(s);
    if (actions_add(until, cosim_unstick, g)) {
        sb_error(b, "too many pending actions");
        return;
    }
    n = cosim_stick(g, bit, level, until, cosim_now());
    sb_printf(b, "{\"ok\":true,\"line\":\"%s\",\"wires\":%d,\"level\":%d,\"cycle\":%" PRIu64 ",\"until_cycle\":%" PRIu64 "}\n",
                   group_names[g], n, level, cosim_now(), until);
}

/*
 * Lockstep: the host grants virtual time, so a run's outcome does not depend on how fast or busy
 * the host is.
 *
 *   grant CYCLE [frame] [in profiler=N[@GEN] executor=M[@GEN]]
 *
 * At start the bench sits at cycle 0 until the first grant, blocked in poll on the control socket
 * (no CPU). A grant first takes the host's input: `in` gives the total number of bytes the host has
 * written into each node's host stream (the line socket's connection, or the pty: uart_host.c) since
 * it began; the bench reads it until it has read exactly that many (a pty write reaches the master side
 * asynchronously, through the kernel's flip-buffer work, so a byte written just before the grant may not
 * be readable yet; a socket's is there when the write returns), waiting up to 2 s, and those bytes enter
 * at the current virtual time. Without `in` it takes what is readable. N@GEN counts the bytes written
 * into the stream of generation GEN (a line socket's connection names its own), waited for only while
 * that stream holds the line (else what is readable is taken). The host sides are read at grant
 * points only, so host input enters at the same cycles in every run.
 * Then the bench runs up to CYCLE (timed actions, cut ends and --until happen at their cycles); with
 * `frame` it stops earlier, at the cycle a 0x00 byte (the COBS frame delimiter) finishes its stop
 * bit on either node's output, with that byte and everything due by then written to the host. The
 * reply comes when it has stopped:
 *   {"ok":true,"cycle":C,"virtual_s":S,"stop":"until"|"frame"|"end","out":{"profiler":N,"executor":M}}
 * "out" is the total number of bytes written to each host stream so far (the host waits until its
 * readers have seen that many); "end": --until or stop ended the run. One grant at a time; the other
 * commands work between and during grants.
 * The reply also has "generation" and "hung_up" per node: the counts `in` and `out` are per host
 * stream, and a new one (a connection to the line socket, the pty a hang-up (faults.c) replaces) starts
 * them again at 0 with a generation of its own; a hung-up node's `in` is not waited for (nothing to read).
 */
#define _GNU_SOURCE
#include "lockstep.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "cosim.h"
#include "uart_bridge.h"
#include "uparse.h"

/* the one outstanding grant of this bench and the --lockstep switch */
struct lockstep lockstep;

/* The grant's reply (the output due by `now` written first: the reply's "out" counts it); no grant
 * outstanding from here on. */
static void grant_done(struct sbuf *b, uint64_t now, const char *stop)
{
    int i;
    for (i = 0; i < NNODES; i++)
        uart_flush_out(i, now);
    now = cosim_now();
    sb_printf(b,
              "{\"ok\":true,\"cycle\":%" PRIu64 ",\"virtual_s\":%.9f,\"stop\":\"%s\",\"out\":{\"profiler\":%" PRIu64
              ",\"executor\":%" PRIu64 "},\"generation\":{\"profiler\":%" PRIu64 ",\"executor\":%" PRIu64
              "},\"hung_up\":{\"profiler\":%s,\"executor\":%s}}\n",
              now, (double)now / (double)F_CPU, stop, uart_out_written(PROFILER), uart_out_written(EXECUTOR),
              uart_generation(PROFILER), uart_generation(EXECUTOR), uart_hung_up(PROFILER) ? "true" : "false",
              uart_hung_up(EXECUTOR) ? "true" : "false");
    lockstep.active = 0;
    lockstep.grants++;
}

/* the grant ran to its end (or the run ended): its client gets the reply now */
static void reply_later(uint64_t now, const char *stop)
{
    struct sbuf b = {0};
    grant_done(&b, now, stop);
    control_reply_later(lockstep.client, b.p, b.n);
    free(b.p);
}

static const char *stop_reason(void)
{
    return lockstep.stop_at < lockstep.granted ? "frame" : "until";
}

/* The earliest 0x00 already queued that is not complete yet (NEVER: none). */
static uint64_t pending_delimiter(uint64_t now)
{
    uint64_t t = NEVER;
    int i;
    for (i = 0; i < NNODES; i++) {
        uint64_t d = uart_next_delimiter(i, now);
        if (d < t)
            t = d;
    }
    return t;
}

void lockstep_grant(struct command_req *req, struct sbuf *b)
{
    uint64_t want[NNODES] = {0, 0}, want_gen[NNODES] = {0, 0}, cycle;
    int have_in = 0, frame = 0, i;
    char *tok, *save = NULL;

    if (!lockstep.on) {
        sb_error(b, "grant: the bench is not in lockstep (--lockstep)");
        return;
    }
    if (lockstep.active) {
        sb_error(b, "grant: a grant is outstanding");
        return;
    }
    tok = strtok_r(req->args, " \t", &save);
    if (!tok || parse_u64(tok, &cycle)) { /* "-1" was 2^64-1: a grant to the end of time */
        sb_error(b, "usage: grant CYCLE [frame] [in profiler=N[@GEN] executor=M[@GEN]] (CYCLE a whole number of cycles >= 0%s%s%s)",
                 tok ? ", not '" : "", tok ? tok : "", tok ? "'" : "");
        return;
    }
    while ((tok = strtok_r(NULL, " \t", &save))) {
        char *eq = strchr(tok, '=');
        if (!strcmp(tok, "frame")) {
            frame = 1;
        } else if (!strcmp(tok, "in")) {
            have_in = 1;
        } else if (have_in && eq) {
            int id;
            char *at;
            *eq = 0;
            id = parse_node(tok);
            if (id < 0) {
                sb_error(b, "grant: unknown node '%s'", tok);
                return;
            }
            at = strchr(eq + 1, '@');
            if (at) /* N@GEN: written into that stream (waited for only while it holds the line) */
                *at = 0;
            /* GEN's top bit marks "a generation was given" in want_gen: a GEN that needs it is refused */
            if (parse_u64(eq + 1, &want[id]) || (at && (parse_u64(at + 1, &want_gen[id]) || want_gen[id] >> 63))) {
                if (at)
                    *at = '@';
                sb_error(b, "grant: %s=%s: a whole number of bytes >= 0, optionally @ a generation", tok, eq + 1);
                return;
            }
            if (at)
                want_gen[id] |= 1ull << 63;
        } else {
            sb_error(b, "grant: unexpected '%s'", tok);
            return;
        }
    }
    /* the host's input first: exactly what it announced, at the current virtual time, at the rate its
     * port is set to now (the host changes it only between grants: the whole grant runs at it); a
     * connection to a line socket the host made before it asked is taken first (its bytes are counted) */
    for (i = 0; i < NNODES; i++) {
        if (cosim_present(i)) {
            uart_accept(i, cosim_now());
            uart_poll_host_baud(i, 1);
        }
        if (!have_in || (want_gen[i] && (want_gen[i] & ~(1ull << 63)) != uart_generation(i))) {
            uart_read_host(i, cosim_now()); /* (another stream holds the line: what is there) */
        } else if (uart_read_host_exactly(i, want[i], cosim_now(), 2000)) {
            sb_error(b, "grant: %s: host announced %" PRIu64 " bytes written, the bench read %" PRIu64 " in 2 s",
                           node_names[i], want[i], uart_in_read(i));
            return;
        }
    }
    lockstep.active = 1;
    lockstep.client = req->client;
    lockstep.frame = frame;
    lockstep.granted = cycle;
    lockstep.stop_at = cycle;
    if (frame) {
        uint64_t d = pending_delimiter(cosim_now());
        if (d < lockstep.stop_at)
            lockstep.stop_at = d;
    }
    if (cosim_now() >= lockstep.stop_at)
        grant_done(b, cosim_now(), stop_reason()); /* there already: the reply now */
    else
        req->later = 1; /* the main loop runs it; lockstep_reached replies */
}

void lockstep_on_byte_out(uint8_t b, uint64_t at)
{
    if (!lockstep.active || !lockstep.frame || b != 0 || at >= lockstep.stop_at)
        return;
    lockstep.stop_at = at;
    cosim_stop_by(at); /* no core has passed it: see cosim_run_until */
}

int lockstep_reached(uint64_t now)
{
    if (!lockstep.active || now < lockstep.stop_at)
        return 0;
    reply_later(now, stop_reason());
    return 1;
}

void lockstep_end(void)
{
    if (lockstep.active)
        reply_later(cosim_now(), "end");
}

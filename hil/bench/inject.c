/*
 * Floor calibration: inject NODE HEX [DELAY_CYCLES]
 *
 * The bench puts the bytes HEX on NODE's UART receive line, as the host's bytes go (10 bit times each
 * at --baud, RXC when the stop bit ends), with the first start bit beginning exactly DELAY_CYCLES
 * (default 0) after the next change of the profiler's timecode output port (PORTA): the tick edge the
 * executor sees, at the cycle the wire delivers it (the instruction's start, cosim.c). A normal-mode
 * FIRE injected so says what the profiler reports for a FIRE whose start bit begins on the tick's
 * edge: its own floor, free of the host.
 *
 * From the command on, host bytes for NODE stay queued (read from the pty, not put on the line) until
 * the injection's last stop bit has ended, so nothing interleaves with the frame; a host byte already
 * begun when the edge comes ends first and the injection starts after its stop bit (late_cycles > 0
 * in the record). Injected bytes see no faults or cuts. The edge is found in the simulation (a
 * notification on the port's pins), so injection works alike paced, unpaced and in lockstep. One
 * injection per node at a time. Reply, once armed:
 *   {"ok":true,"id":K,"node":N,"bytes":B,"delay_cycles":D,"cycle":C,"virtual_s":S}
 * The status has "inject_pending" (nodes armed, waiting for the edge) and "injections", the last 16:
 *   {"id","node","bytes","delay_cycles","armed_cycle","edge_cycle","port","start_cycle","late_cycles",
 *    "end_cycle"}  (edge_cycle .. end_cycle null until they happen; port: the new port value)
 * Every cycle here is global (nominal 16 MHz), as the host's line is timed: with a crystal offset
 * (cosim.h) the edge is the profiler's cycle of the port write in global time, rounded up. With the 8051
 * profiler (node51.c) the edge is its P1 write, at the end of the writing instruction (when its latch
 * takes the value, and when the executor sees it), and the injected start bit begins at the 8051's first
 * instruction boundary at or after its moment.
 */
#define _GNU_SOURCE
#include "inject.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "cosim.h"
#include "uart_bridge.h"

#define RECORDS 16

struct record {
    uint64_t id;
    int node;
    size_t bytes;
    uint64_t delay, armed, edge, start, late, end;
    uint8_t port;
    int have_edge, have_end;
};

/* the watch on the profiler's port, the armed injections and the record of the last ones */
static struct {
    int watching;
    uint8_t port; /* the port's last value */
    int pending[NNODES];
    uint8_t data[NNODES][INJECT_MAX];
    size_t n[NNODES];
    struct record rec[RECORDS]; /* a ring: the last RECORDS injections, oldest at head */
    size_t head, count;
    uint64_t next_id;
} injector;

static struct record *latest(int node)
{
    size_t i;
    for (i = injector.count; i-- > 0;) {
        struct record *r = &injector.rec[(injector.head + i) % RECORDS];
        if (r->node == node)
            return r;
    }
    return NULL;
}

/* the injection's last stop bit ended (uart_line.c) */
static void line_done(int id, uint64_t cycle)
{
    struct record *r = latest(id);
    if (r && !r->have_end) {
        r->end = cycle;
        r->have_end = 1;
    }
}

/* the profiler's timecode port changed (global cycle `edge`) */
static void edge_seen(uint64_t edge, uint8_t v)
{
    int id;
    if (v == injector.port)
        return;
    injector.port = v;
    for (id = 0; id < NNODES; id++) {
        struct record *r;
        if (!injector.pending[id])
            continue;
        injector.pending[id] = 0;
        r = latest(id);
        r->edge = edge;
        r->port = v;
        r->have_edge = 1;
        r->start = uart_inject(id, injector.data[id], injector.n[id], edge + r->delay, line_done);
        r->late = r->start - (edge + r->delay);
    }
}

/* The timecode port's pins as a whole, after the single pins' changes the wires act on (node.h:
 * watch_port): a change is the edge. */
static void on_port(void *ctx, uint8_t value, uint64_t at)
{
    (void)ctx;
    edge_seen(node_to_global(PROFILER, at), value); /* the host line's time */
}

void inject_attach(void)
{
    struct node *p = cosim_node(PROFILER);
    char port = p->pins->timecode[0].port;
    injector.port = p->ops->port_out(p, port); /* the 8051's latch leaves reset at 0xFF, an AVR's pins at 0 */
    p->ops->watch_port(p, port, on_port, NULL);
    injector.watching = 1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

void inject_command(struct command_req *req, struct sbuf *b)
{
    char *save = NULL, *node = strtok_r(req->args, " \t", &save), *hex = strtok_r(NULL, " \t", &save);
    char *delay_s = strtok_r(NULL, " \t", &save), *end = NULL;
    int id = node ? parse_node(node) : -1;
    uint64_t delay = 0;
    size_t n = 0, len;
    struct record *r;

    if (!node || !hex || strtok_r(NULL, " \t", &save)) {
        sb_error(b, "usage: inject NODE HEX [DELAY_CYCLES]");
        return;
    }
    if (id < 0 || !cosim_present(id)) {
        sb_error(b, "inject: unknown node '%.40s'", node);
        return;
    }
    if (!injector.watching) {
        sb_error(b, "inject: no profiler (its timecode port gives the edge)");
        return;
    }
    if (delay_s) {
        delay = strtoull(delay_s, &end, 0);
        if (*end || *delay_s == '-') {
            sb_error(b, "inject: bad DELAY_CYCLES '%.40s'", delay_s);
            return;
        }
    }
    if (injector.pending[id] || uart_held(id)) {
        sb_error(b, "inject: an injection into %s is armed or on the line", node_names[id]);
        return;
    }
    len = strlen(hex);
    if (!len || len % 2 || len / 2 > INJECT_MAX) {
        sb_error(b, "inject: HEX must be 1..%d bytes, two hex digits each", INJECT_MAX);
        return;
    }
    for (; n < len / 2; n++) {
        int hi = hexval(hex[2 * n]), lo = hexval(hex[2 * n + 1]);
        if (hi < 0 || lo < 0) {
            sb_error(b, "inject: HEX must be 1..%d bytes, two hex digits each", INJECT_MAX);
            return;
        }
        injector.data[id][n] = (uint8_t)(hi << 4 | lo);
    }
    injector.n[id] = n;
    injector.pending[id] = 1;
    uart_hold(id);
    if (injector.count == RECORDS) {
        injector.head = (injector.head + 1) % RECORDS;
        injector.count--;
    }
    r = &injector.rec[(injector.head + injector.count++) % RECORDS];
    *r = (struct record){.id = injector.next_id++, .node = id, .bytes = n, .delay = delay, .armed = cosim_now()};
    sb_printf(b, "{\"ok\":true,\"id\":%" PRIu64 ",\"node\":\"%s\",\"bytes\":%zu,\"delay_cycles\":%" PRIu64
                       ",\"cycle\":%" PRIu64 ",\"virtual_s\":%.9f}\n",
                   r->id, node_names[id], n, delay, cosim_now(), (double)cosim_now() / (double)F_CPU);
}

static void opt_cycle(struct sbuf *b, const char *name, int have, uint64_t v)
{
    if (have)
        sb_printf(b, ",\"%s\":%" PRIu64, name, v);
    else
        sb_printf(b, ",\"%s\":null", name);
}

void inject_status_json(struct sbuf *b)
{
    size_t i;
    int id, first = 1;
    sb_printf(b, "\"inject_pending\":[");
    for (id = 0; id < NNODES; id++)
        if (injector.pending[id]) {
            sb_printf(b, "%s\"%s\"", first ? "" : ",", node_names[id]);
            first = 0;
        }
    sb_printf(b, "],\"injections\":[");
    for (i = 0; i < injector.count; i++) {
        const struct record *r = &injector.rec[(injector.head + i) % RECORDS];
        sb_printf(b, "%s{\"id\":%" PRIu64 ",\"node\":\"%s\",\"bytes\":%zu,\"delay_cycles\":%" PRIu64 ",\"armed_cycle\":%" PRIu64,
                  i ? "," : "", r->id, node_names[r->node], r->bytes, r->delay, r->armed);
        opt_cycle(b, "edge_cycle", r->have_edge, r->edge);
        if (r->have_edge)
            sb_printf(b, ",\"port\":%u", r->port);
        else
            sb_printf(b, ",\"port\":null");
        opt_cycle(b, "start_cycle", r->have_edge, r->start);
        opt_cycle(b, "late_cycles", r->have_edge, r->late);
        opt_cycle(b, "end_cycle", r->have_end, r->end);
        sb_printf(b, "}");
    }
    sb_printf(b, "],");
}

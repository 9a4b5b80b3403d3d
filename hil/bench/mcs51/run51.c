/*
 * run51: the 8051 profiler image alone on ucsim's core (mcs51.h), unpaced, for N virtual seconds.
 *
 *   run51 [--seconds S] [--executor] [--fire-ms MS] [--reset-at S] [--quantum CLOCKS] [--json]
 *         [--trace FILE] IMAGE.ihx
 *
 *   --executor   a stand-in executor: each timecode change on P1 (the new value is the old one + 1) is
 *                answered with an event on P0 EXEC_DELAY_CLOCKS later (1.375 us, the executor's ISR dispatch,
 *                as the first study of the 8051 on the bench took it): id = timecode & 7 on P0.0-2, the strobe P0.3 toggled. The edge lands at the
 *                first instruction boundary at or after that moment (P0 is only read by instructions).
 *   --fire-ms MS a FIRE frame (event id 5, tag 1, 2, ...) onto the UART's receive line every MS ms of
 *                virtual time, from 0.5 s on; its RESULT's stamp is compared with the moment its first
 *                start bit went onto the line
 *   --reset-at S the node's reset (mcs51_reset) at S virtual seconds: the profiler starts again (a second
 *                HELLO, timecodes from 1); a frame on the line then is cut (one bad frame at most)
 *   --quantum C  return from mcs51_run_until at least every C clocks (1: after every instruction), as a
 *                co-simulation that interleaves the 8051 with other cores would: the speed it costs
 *   --json       one JSON object instead of the text summary (hil/tests/test_mcs51.py reads it)
 *   --trace FILE every P1 write, P0 edge and UART byte with its clock (text, one per line)
 *
 * The UART's output is decoded as protocol frames (protocol/c: COBS + CRC, mm_msg_check). It prints
 * the frame counts by type, the RESULT latencies (RESULT timecode and counts against the P1 change
 * the stand-in answered, SPEC.md section 7), their error against the edge's true moment, the tick as
 * seen on P1 and in TIMECODE frames, and the speed as a multiple of real time.
 *
 * Exit: 0 run done; 1 the 8051 stopped (an invalid instruction...); 2 bad arguments or image.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcs51.h"
#include "mmproto.h"

#define XTAL ((double)MCS51_XTAL_HZ)
#define CPC MCS51_CLOCKS_PER_CYCLE
#define CLK_US(c) ((double)(c) * 1e6 / XTAL)
/* 1.375 us = 15.2 clocks: the stand-in answers 15 clocks after the write (then the next boundary). */
#define EXEC_DELAY_CLOCKS 15u
#define TICK_CYCLES 65536u
#define MAXN 100000 /* events / frames recorded (a 60 s run has ~850 ticks) */

struct edge {
    uint64_t p1_clock;  /* the P1 change answered */
    uint64_t at;        /* when the edge was put on P0 (an instruction boundary) */
    uint8_t tc;         /* the P1 value */
};

struct run {
    mcs51_t *m;
    FILE *trace;
    int executor;
    /* P1 */
    uint8_t p1;
    unsigned long bytes_at_reset;
    int tc_restart;          /* the next TIMECODE starts a new series (after a reset) */
    uint64_t p1_at[256];     /* the last change to each value (a tick's start, by its timecode) */
    uint64_t last_tick;
    uint64_t tick_min, tick_max;
    unsigned long ticks;
    /* stand-in executor */
    uint8_t p0;
    int edge_due;
    uint64_t edge_at;
    struct edge *edges;
    unsigned long n_edges;
    /* FIRE */
    uint64_t *fire_at;       /* start bit of each FIRE frame's first byte, by tag - 1 */
    unsigned long n_fires;
    uint8_t seq;
    /* UART out */
    struct mm_dec dec;
    uint64_t frame_first;    /* stop-bit end of the current frame's first byte */
    uint8_t p1_first;        /* P1 then */
    unsigned long bytes, n_hello, n_timecode, n_result, n_other, n_bad;
    unsigned long tc_match, tc_mismatch, tc_consecutive_breaks;
    uint32_t last_tc;
    uint64_t last_tc_frame;
    uint64_t tcf_min, tcf_max;
    double *lat, *err;
    unsigned long n_lat, n_lost, id_mismatch;
    double fire_err_min, fire_err_max;
    unsigned long n_fire_results;
    unsigned long n_resets;
};

static void on_port(void *ctx, int port, uint64_t clock, uint8_t v)
{
    struct run *r = ctx;
    if (r->trace)
        fprintf(r->trace, "%llu P%d %02x\n", (unsigned long long)clock, port, v);
    if (port != 1)
        return;
    /* A tick: the timecode advanced. 0xFF -> 0 is also the reset latch to board_init's timecode 0,
     * before the first byte (HELLO) went out since the (last) reset: a tick only after that. */
    if (v != r->p1 && v == (uint8_t)(r->p1 + 1) && (v != 0 || r->bytes > r->bytes_at_reset)) {
        if (r->last_tick) {
            uint64_t d = (clock - r->last_tick) / CPC;
            if (!r->ticks || d < r->tick_min)
                r->tick_min = d;
            if (d > r->tick_max)
                r->tick_max = d;
            r->ticks++;
        }
        r->last_tick = clock;
        if (r->executor && r->n_edges < MAXN) {
            r->edge_due = 1;
            r->edge_at = clock + EXEC_DELAY_CLOCKS;
            r->edges[r->n_edges].p1_clock = clock;
            r->edges[r->n_edges].tc = v;
            mcs51_break(r->m);   /* back to main's loop, which puts the edge on P0 in time */
        }
    }
    if (v != r->p1)
        r->p1_at[v] = clock;
    r->p1 = v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* clock: when the frame's first byte was complete (its stop bit's end) */
static void on_frame(struct run *r, uint64_t clock, const uint8_t *p, uint8_t len)
{
    if (mm_msg_check(p, len) != MM_MSG_OK) {
        r->n_bad++;
        return;
    }
    const uint8_t *b = p + MM_HDR_LEN;
    switch (p[MM_HDR_TYPE]) {
    case MM_T_HELLO:
        r->n_hello++;
        break;
    case MM_T_TIMECODE: {
        uint32_t tc = mm_get_u32(b + MM_TIMECODE_TIMECODE);
        if (r->n_timecode && !r->tc_restart && tc != r->last_tc + 1)
            r->tc_consecutive_breaks++;
        if ((uint8_t)tc == r->p1_first)   /* the port showed this timecode as its frame began */
            r->tc_match++;
        else
            r->tc_mismatch++;
        if (r->n_timecode && !r->tc_restart) {
            uint64_t d = (clock - r->last_tc_frame) / CPC;
            if (r->n_timecode == 1 || d < r->tcf_min)
                r->tcf_min = d;
            if (d > r->tcf_max)
                r->tcf_max = d;
        }
        r->tc_restart = 0;
        r->last_tc = tc;
        r->last_tc_frame = clock;
        r->n_timecode++;
        break;
    }
    case MM_T_RESULT: {
        uint8_t id = b[MM_RESULT_EVENT_ID], flags = b[MM_RESULT_FLAGS];
        uint16_t tag = mm_get_u16(b + MM_RESULT_TAG);
        uint32_t tc = mm_get_u32(b + MM_RESULT_TIMECODE), counts = mm_get_u32(b + MM_RESULT_COUNTS);
        r->n_result++;
        if (flags & 0x01) {   /* a FIRE: its stamp is the start bit of its first byte */
            if (tag >= 1 && tag <= r->n_fires) {
                double stamp = (double)r->p1_at[(uint8_t)tc] + (double)counts * CPC;
                double e = CLK_US(stamp - (double)r->fire_at[tag - 1]);
                if (!r->n_fire_results || e < r->fire_err_min)
                    r->fire_err_min = e;
                if (!r->n_fire_results || e > r->fire_err_max)
                    r->fire_err_max = e;
                r->n_fire_results++;
            }
            break;
        }
        if (flags & 0x02)
            r->n_lost++;
        /* Edge RESULTs come in edge order: the n-th answers the n-th edge. */
        unsigned long k = r->n_lat;
        if (k >= r->n_edges)
            break;
        struct edge *e = &r->edges[k];
        if (id != (e->tc & 7u))
            r->id_mismatch++;
        int64_t lc = (int64_t)(int8_t)(uint8_t)((uint8_t)tc - e->tc) * TICK_CYCLES + (int64_t)counts;
        double lat = (double)lc * CPC * 1e6 / XTAL;
        r->lat[k] = lat;
        r->err[k] = lat - CLK_US(e->at - e->p1_clock);
        r->n_lat++;
        break;
    }
    default:
        r->n_other++;
        break;
    }
}

static void on_tx(void *ctx, uint64_t clock, uint8_t byte)
{
    struct run *r = ctx;
    if (r->trace)
        fprintf(r->trace, "%llu TX %02x\n", (unsigned long long)clock, byte);
    r->bytes++;
    if (mm_dec_at_frame_start(&r->dec) && byte != 0) {
        r->frame_first = clock;
        r->p1_first = r->p1;
    }
    uint8_t st = mm_dec_push(&r->dec, byte);
    if (st == MM_DEC_FRAME)
        on_frame(r, r->frame_first, r->dec.buf, (uint8_t)mm_dec_payload_len(&r->dec));
    else if (st != MM_DEC_BUSY)
        r->n_bad++;
}

static void send_fire(struct run *r)
{
    uint8_t body[MM_FIRE_LEN];
    struct mm_enc e;
    int16_t c;
    unsigned long tag = r->n_fires + 1;

    body[MM_FIRE_EVENT_ID] = 5;
    mm_put_u16(body + MM_FIRE_TAG, (uint16_t)tag);
    mm_enc_start(&e, MM_T_FIRE, r->seq++, body, MM_FIRE_LEN);
    /* The line is free (FIREs are far apart): the first byte's start bit begins now. */
    r->fire_at[r->n_fires++] = mcs51_clock(r->m);
    while ((c = mm_enc_next(&e)) >= 0) {
        if (r->trace)
            fprintf(r->trace, "%llu RX %02x\n", (unsigned long long)mcs51_clock(r->m), (unsigned)c);
        if (mcs51_uart_rx(r->m, (uint8_t)c) < 0) {
            fprintf(stderr, "run51: the UART receive queue is full\n");
            exit(1);
        }
    }
}

/* The node's reset: what the profiler had not reported yet is gone, and so is the tick series. */
static void reset_node(struct run *r)
{
    mcs51_reset(r->m);
    r->n_edges = r->n_lat;
    r->edge_due = 0;
    r->last_tick = 0;
    r->tc_restart = 1;
    r->bytes_at_reset = r->bytes;
    r->n_resets++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    fprintf(stderr, "usage: run51 [--seconds S] [--executor] [--fire-ms MS] [--reset-at S] [--quantum CLOCKS] "
                    "[--json] [--trace FILE] IMAGE.ihx\n");
    exit(2);
}

int main(int argc, char **argv)
{
    static struct run r;
    double seconds = 10.0, fire_ms = 0, reset_s = -1;
    unsigned long quantum = 0;
    int json = 0;
    const char *ihx = NULL, *trace = NULL;
    char *end;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            seconds = strtod(argv[++i], &end);
            if (*end || seconds <= 0 || seconds > 3600)
                usage();
        } else if (!strcmp(argv[i], "--fire-ms") && i + 1 < argc) {
            fire_ms = strtod(argv[++i], &end);
            if (*end || fire_ms < 10)
                usage();
        } else if (!strcmp(argv[i], "--reset-at") && i + 1 < argc) {
            reset_s = strtod(argv[++i], &end);
            if (*end || reset_s <= 0)
                usage();
        } else if (!strcmp(argv[i], "--quantum") && i + 1 < argc) {
            quantum = strtoul(argv[++i], &end, 10);
            if (*end || quantum == 0)
                usage();
        } else if (!strcmp(argv[i], "--executor")) {
            r.executor = 1;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--trace") && i + 1 < argc) {
            trace = argv[++i];
        } else if (argv[i][0] != '-' && !ihx) {
            ihx = argv[i];
        } else {
            usage();
        }
    }
    if (!ihx)
        usage();

    char err[200];
    r.m = mcs51_create(err, sizeof err);
    if (!r.m) {
        fprintf(stderr, "run51: %s\n", err);
        return 1;
    }
    if (trace && !(r.trace = fopen(trace, "w"))) {
        fprintf(stderr, "run51: cannot write %s: %s\n", trace, strerror(errno));
        return 2;
    }
    r.edges = calloc(MAXN, sizeof *r.edges);
    r.fire_at = calloc(MAXN, sizeof *r.fire_at);
    r.lat = calloc(MAXN, sizeof *r.lat);
    r.err = calloc(MAXN, sizeof *r.err);
    if (!r.edges || !r.fire_at || !r.lat || !r.err) {
        fprintf(stderr, "run51: out of memory\n");
        return 1;
    }
    mm_dec_init(&r.dec);
    r.p1 = 0xFF;
    r.p0 = 0xFF;
    mcs51_on_port(r.m, on_port, &r);
    mcs51_on_tx(r.m, on_tx, &r);
    if (mcs51_load_ihx(r.m, ihx) < 0) {
        fprintf(stderr, "run51: cannot load %s (not an Intel HEX image?)\n", ihx);
        return 2;
    }
    mcs51_set_p0(r.m, r.p0);

    uint64_t until = (uint64_t)(seconds * XTAL);
    uint64_t fire_step = (uint64_t)(fire_ms * 1e-3 * XTAL);
    uint64_t next_fire = fire_step ? (uint64_t)(0.5 * XTAL) : UINT64_MAX;
    uint64_t reset_at = reset_s > 0 ? (uint64_t)(reset_s * XTAL) : UINT64_MAX;
    double t0 = now_s();
    while (mcs51_clock(r.m) < until) {
        uint64_t next = until;
        if (r.edge_due && r.edge_at < next)
            next = r.edge_at;
        if (next_fire < next)
            next = next_fire;
        if (reset_at < next)
            next = reset_at;
        if (quantum && mcs51_clock(r.m) + quantum < next)
            next = mcs51_clock(r.m) + quantum;
        if (mcs51_run_until(r.m, next) < 0) {   /* 1: stopped early for a P1 change, see edge_due */
            fprintf(stderr, "run51: the 8051 stopped at clock %llu: %s\n",
                    (unsigned long long)mcs51_clock(r.m), mcs51_error(r.m));
            return 1;
        }
        uint64_t now = mcs51_clock(r.m);
        if (now >= reset_at) {
            if (r.trace)
                fprintf(r.trace, "%llu RESET\n", (unsigned long long)now);
            reset_node(&r);
            reset_at = UINT64_MAX;
        }
        if (r.edge_due && now >= r.edge_at) {
            struct edge *e = &r.edges[r.n_edges++];
            r.p0 = (uint8_t)(((r.p0 ^ 0x08u) & 0xF8u) | (e->tc & 7u));
            mcs51_set_p0(r.m, r.p0);
            e->at = now;
            r.edge_due = 0;
            if (r.trace)
                fprintf(r.trace, "%llu P0 %02x\n", (unsigned long long)now, r.p0);
        }
        if (now >= next_fire && now < until && r.n_fires < MAXN) {
            send_fire(&r);
            next_fire += fire_step;
        }
    }
    double wall = now_s() - t0;
    double vsec = (double)mcs51_clock(r.m) / XTAL;
    if (r.trace)
        fclose(r.trace);

    double lmin = 0, lmed = 0, lmax = 0, emin = 0, emax = 0;
    if (r.n_lat) {
        double *s = malloc(r.n_lat * sizeof *s);
        memcpy(s, r.lat, r.n_lat * sizeof *s);
        qsort(s, r.n_lat, sizeof *s, cmp_double);
        lmin = s[0];
        lmed = s[r.n_lat / 2];
        lmax = s[r.n_lat - 1];
        memcpy(s, r.err, r.n_lat * sizeof *s);
        qsort(s, r.n_lat, sizeof *s, cmp_double);
        emin = s[0];
        emax = s[r.n_lat - 1];
        free(s);
    }
    if (json) {
        printf("{\"virtual_s\": %.6f, \"wall_s\": %.3f, \"speed\": %.3f, \"bytes\": %lu, \"bad\": %lu, "
               "\"hello\": %lu, \"timecode\": %lu, \"result\": %lu, \"other\": %lu, "
               "\"timecode_breaks\": %lu, \"p1_is_timecode\": %lu, \"p1_not_timecode\": %lu, "
               "\"ticks\": %lu, \"tick_min\": %llu, \"tick_max\": %llu, "
               "\"timecode_frame_min\": %llu, \"timecode_frame_max\": %llu, "
               "\"edges\": %lu, \"edge_results\": %lu, \"lost_before\": %lu, \"id_mismatch\": %lu, "
               "\"latency_us\": {\"min\": %.3f, \"median\": %.3f, \"max\": %.3f}, "
               "\"error_us\": {\"min\": %.3f, \"max\": %.3f}, "
               "\"fires\": %lu, \"fire_results\": %lu, \"fire_error_us\": {\"min\": %.3f, \"max\": %.3f}, "
               "\"rx_lost\": %lu, \"resets\": %lu}\n",
               vsec, wall, vsec / wall, r.bytes, r.n_bad, r.n_hello, r.n_timecode, r.n_result, r.n_other,
               r.tc_consecutive_breaks, r.tc_match, r.tc_mismatch, r.ticks,
               (unsigned long long)r.tick_min, (unsigned long long)r.tick_max,
               (unsigned long long)r.tcf_min, (unsigned long long)r.tcf_max,
               r.n_edges, r.n_lat, r.n_lost, r.id_mismatch, lmin, lmed, lmax, emin, emax,
               r.n_fires, r.n_fire_results, r.fire_err_min, r.fire_err_max, mcs51_uart_rx_lost(r.m),
               r.n_resets);
    } else {
        printf("run51: %.3f virtual s in %.3f s: %.2fx real time\n", vsec, wall, vsec / wall);
        printf("frames: %lu HELLO, %lu TIMECODE, %lu RESULT, %lu other, %lu bad (%lu bytes)\n",
               r.n_hello, r.n_timecode, r.n_result, r.n_other, r.n_bad, r.bytes);
        printf("tick: P1 changes %llu..%llu machine cycles apart, TIMECODE frames (first byte) %llu..%llu;"
               " P1 = timecode at %lu of %lu frames\n",
               (unsigned long long)r.tick_min, (unsigned long long)r.tick_max,
               (unsigned long long)r.tcf_min, (unsigned long long)r.tcf_max, r.tc_match,
               r.tc_match + r.tc_mismatch);
        if (r.executor)
            printf("RESULT latency (%lu of %lu edges): min %.1f / median %.1f / max %.1f us; "
                   "error against the edge %.1f..%.1f us\n",
                   r.n_lat, r.n_edges, lmin, lmed, lmax, emin, emax);
        if (r.n_fires)
            printf("FIRE: %lu of %lu answered, stamp - start bit %.1f..%.1f us\n", r.n_fire_results,
                   r.n_fires, r.fire_err_min, r.fire_err_max);
    }
    return 0;
}

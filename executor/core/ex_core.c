#include "ex_core.h"

#include "ex_board.h"

#define LFSR_SEED 0xACE1u

/* ex_list keeps the horizon without the protocol header; it must be the SPEC's. */
typedef char ex_horizon_is_the_spec_s[(EX_LIST_HORIZON_TICKS == MM_SCHEDULE_HORIZON_TICKS) ? 1 : -1];

uint16_t ex_lfsr(uint16_t r)
{
    /* x^16 + x^14 + x^13 + x^11 + 1, period 65535 */
    return (uint16_t)((r >> 1) ^ ((r & 1u) ? 0xB400u : 0u));
}

/* ---- sending ---------------------------------------------------------------------------------- */

static void send(struct ex *x, uint8_t type, const uint8_t *body, uint8_t len)
{
    struct mm_enc e;
    int16_t b;
    uint8_t seq = x->seq++;

    /* A frame that does not fit is dropped whole and still uses up its sequence number, so the
     * receiver counts it as lost (SPEC.md section 4). */
    if (exb_tx_room() < (uint8_t)MM_WIRE_LEN(len)) {
        x->cnt.tx_dropped++;
        return;
    }
    mm_enc_start(&e, type, seq, body, len);
    while ((b = mm_enc_next(&e)) >= 0)
        exb_tx_put((uint8_t)b);
    exb_tx_kick();
}

static void send_hello(struct ex *x)
{
    uint8_t b[MM_HELLO_LEN];

    b[MM_HELLO_PROTO_VERSION] = MM_PROTO_VERSION;
    b[MM_HELLO_NODE_KIND] = MM_NODE_EXECUTOR;
    mm_put_u16(b + MM_HELLO_FW_VERSION, EX_FW_VERSION);
    mm_put_u32(b + MM_HELLO_CPU_HZ, x->cfg->cpu_hz);
    mm_put_u32(b + MM_HELLO_TIMER_HZ, x->cfg->timer_hz);
    mm_put_u32(b + MM_HELLO_TICK_COUNTS, x->cfg->tick_counts);
    mm_put_u32(b + MM_HELLO_BAUD, x->baud);
    b[MM_HELLO_FLAGS] = 0; /* the executor has no event input */
    b[MM_HELLO_RESET_CAUSE] = exb_reset_cause();
    send(x, MM_T_HELLO, b, sizeof b);
}

static void send_error(struct ex *x, uint8_t code, uint8_t ref_type, uint16_t ref_tag)
{
    uint8_t b[MM_ERROR_LEN];

    b[MM_ERROR_CODE] = code;
    b[MM_ERROR_REF_TYPE] = ref_type;
    mm_put_u16(b + MM_ERROR_REF_TAG, ref_tag);
    mm_put_u32(b + MM_ERROR_TIMECODE, x->tc.ext);
    send(x, MM_T_ERROR, b, sizeof b);
}

/* LOCAL_EVENT and FIRED share one layout (tag, event_id, timecode). */
static void send_event(struct ex *x, uint8_t type, uint16_t tag, uint8_t id, uint32_t tc)
{
    uint8_t b[MM_FIRED_LEN];

    mm_put_u16(b + MM_FIRED_TAG, tag);
    b[MM_FIRED_EVENT_ID] = id;
    mm_put_u32(b + MM_FIRED_TIMECODE, tc);
    send(x, type, b, sizeof b);
}

static void send_status(struct ex *x)
{
    uint8_t b[MM_STATUS_LEN];
    uint32_t loops, runs;
    uint16_t overruns;

    b[MM_STATUS_MODE] = x->mode;
    b[MM_STATUS_DISPATCH] = x->dispatch;
    mm_put_u32(b + MM_STATUS_TIMECODE, x->tc.ext);
    b[MM_STATUS_PENDING] = x->list.n;
    b[MM_STATUS_CAPACITY] = EX_LIST_CAPACITY;
    mm_put_u32(b + MM_STATUS_FIRED, x->fired);
    mm_put_u16(b + MM_STATUS_STACK_TIMECODE, exb_stack_free(0));
    mm_put_u16(b + MM_STATUS_STACK_SERIAL, exb_stack_free(1));
    mm_put_u16(b + MM_STATUS_STACK_STATUS, exb_stack_free(2));
    b[MM_STATUS_CPU_LOAD] = x->cpu_load;
    mm_put_u16(b + MM_STATUS_PERIODIC_PERIOD_US, x->load_period_us);
    mm_put_u16(b + MM_STATUS_PERIODIC_EXEC_US, x->load_exec_us);
    exb_load_counts(&loops, &runs, &overruns);
    mm_put_u32(b + MM_STATUS_CPU_LOOPS, loops);
    mm_put_u32(b + MM_STATUS_PERIODIC_RUNS, runs);
    mm_put_u16(b + MM_STATUS_PERIODIC_OVERRUNS, overruns);
    send(x, MM_T_STATUS, b, sizeof b);
}

static void send_counters(struct ex *x)
{
    uint8_t b[MM_COUNTERS_LEN];
    uint16_t ring, hw;

    mm_put_u16(b + MM_COUNTERS_RX_OK, x->cnt.rx_ok);
    mm_put_u16(b + MM_COUNTERS_RX_BAD_CRC, x->cnt.rx_bad_crc);
    mm_put_u16(b + MM_COUNTERS_RX_BAD_COBS, x->cnt.rx_bad_cobs);
    mm_put_u16(b + MM_COUNTERS_RX_TOO_LONG, x->cnt.rx_too_long);
    mm_put_u16(b + MM_COUNTERS_RX_TOO_SHORT, x->cnt.rx_too_short);
    mm_put_u16(b + MM_COUNTERS_RX_BAD_MESSAGE, x->cnt.rx_bad_message);
    mm_put_u16(b + MM_COUNTERS_TX_DROPPED, x->cnt.tx_dropped);
    mm_put_u16(b + MM_COUNTERS_NODE_A, x->cnt.refused_duplicate);
    mm_put_u16(b + MM_COUNTERS_NODE_B, x->cnt.refused_full);
    mm_put_u16(b + MM_COUNTERS_NODE_C, x->cnt.refused_past_due);
    mm_put_u16(b + MM_COUNTERS_NODE_D, x->tc.glitches);
    exb_rx_lost(&ring, &hw);
    mm_put_u16(b + MM_COUNTERS_RX_RING_OVERFLOW, ring);
    mm_put_u16(b + MM_COUNTERS_RX_HW_OVERRUN, hw);
    send(x, MM_T_COUNTERS, b, sizeof b);
}

/* ---- dispatch --------------------------------------------------------------------------------- */

static uint8_t next_out(const struct ex *x, uint8_t id)
{
    return (uint8_t)((id & EX_OUT_ID_MASK) | (x->strobe ^ EX_OUT_STROBE));
}

/* Precompute and arm the output for the next tick, if the head event is due at exactly that tick.
 * (Arming an event further ahead would fire it 256 ticks early when the low byte comes round.) */
static void rearm(struct ex *x)
{
    const struct ex_entry *h = &x->list.e[0];

    if (x->list.n != 0 && h->tc == x->tc.ext + 1u)
        exb_arm(x->dispatch == MM_DISPATCH_TASK ? EXB_ARM_TASK : EXB_ARM_ISR, (uint8_t)h->tc,
                next_out(x, h->id));
    else
        exb_arm(EXB_ARM_NONE, 0, 0);
}

/* Puts every due event on the port (the first may already be there: `already`), then reports them. */
static void fire_due(struct ex *x, uint8_t already)
{
    uint8_t k = ex_list_due(&x->list, x->tc.ext);
    uint8_t i;

    if (already && k == 0)
        k = 1; /* the ISR fired on a glitch that matched the armed byte: it left, report it */
    for (i = 0; i < k; i++) {
        if (!(i == 0 && already)) {
            if (i > 0)
                exb_output_gap(); /* after an edge of this tick: the profiler's capture needs it (ex_board.h) */
            exb_output(next_out(x, x->list.e[i].id));
        }
        x->strobe ^= EX_OUT_STROBE;
    }
    for (i = 0; i < k; i++) {
        const struct ex_entry *e = &x->list.e[i];
        x->fired++;
        send_event(x, MM_T_FIRED, e->tag, e->id, x->tc.ext);
    }
    ex_list_pop(&x->list, k);
}

/* Arms the series' next moment when its tick is the current or the next one (the board places it in the
 * tick it measures from that tick's edge); a moment whose tick is over is armed at the current tick's start,
 * so the board puts it out at once, late. Further ahead: nothing armed yet (ex_tick arms it as ticks pass).
 *
 * A moment the board holds already for its own tick (armed as the next tick's, its tick now the current one)
 * is left alone, because re-arming it at each new tick races with its compare: the timecode task runs the
 * core 1100-1300 cycles (~18 Timer1 counts) after an edge, so a tick's first moment due about then is taken
 * back from the compare the edge had placed and, within 2 counts of its time, written at once by the task,
 * where no interrupt wakes the core to report it. On the bench (lockstep, 2026-11-27) re-arming did that at
 * -i 0.667, 0.6, 0.35, 0.333333 and 0.3 (the periods whose first moment of some tick falls 17-20 counts after
 * its edge) and in long 1 ms runs: the core then found every later moment past and put them out 8 a tick
 * (4762 of 6000 missed at 0.667). tests/test_core.c series_at_the_bench_rates_fires_every_moment_on_time. */
static void series_arm(struct ex *x)
{
    uint32_t d = x->series.tc - x->tc.ext;
    uint8_t path = x->dispatch == MM_DISPATCH_TASK ? EXB_ARM_TASK : EXB_ARM_ISR;

    if (x->series.left == 0 || (d > 1u && d < 0x80000000ul)) {
        exb_disarm_moment();
        x->series.armed = 0;
        return;
    }
    if (d >= 0x80000000ul) {
        x->series.armed_tc = x->tc.ext;
        exb_arm_moment(path, (uint8_t)x->tc.ext, 0, next_out(x, x->series.id));
    } else if (!x->series.armed || x->series.armed_tc != x->series.tc) {
        x->series.armed_tc = x->series.tc;
        exb_arm_moment(path, (uint8_t)x->series.tc, ex_series_phase(&x->series), next_out(x, x->series.id));
    }
    x->series.armed = 1;
}

/* One moment of the series the board has put out: counted (STATUS.fired counts every event, quiet or not)
 * and reported FIRED, unless the series is quiet and this is not its last event. Quiet because of the line:
 * a FIRED is 13 bytes on the wire, so 115200 baud carries 886 a second at most, and a 1 kHz series would
 * fill the transmit buffer and drop frames (COUNTERS tx_dropped), its ACKs and ERRORs among them. */
static void series_fired(struct ex *x)
{
    x->strobe ^= EX_OUT_STROBE;
    x->fired++;
    if (!x->series.quiet || x->series.left == 1u)
        send_event(x, MM_T_FIRED, x->series.tag, x->series.id, x->series.armed_tc);
    ex_series_next(&x->series);
}

/* Reports every moment the board has put out (FIRED, naming the tick it was armed in: where the profiler
 * stamps its edge, so the scheduler joins the two by tick and id whenever the report comes) and arms the next. Bounded: a moment armed late is
 * written at once by exb_arm_moment, so several may come out here one after the other (after a glitch
 * held the ticks back, say); 8 a call keeps the core's lock short, the rest follow on the next call. */
static void series_report(struct ex *x)
{
    uint8_t n = 0;

    while (x->series.left != 0 && n++ < 8u && exb_moment_done()) {
        exb_disarm_moment();
        series_fired(x);
        if (x->series.left == 0 && x->next.left != 0) {
            x->series = x->next; /* the queued series takes over, its moments its own */
            x->next.left = 0;
        }
        series_arm(x);
    }
}

/* Ends a running series; returns the events it had left (at most 255, CANCELLED's field). */
static uint8_t series_end(struct ex *x)
{
    uint16_t left;

    if (exb_disarm_moment() && x->series.left != 0) {
        /* put out before the end came: it left, report it (a quiet series: counted, FIRED only if it was
         * the last; CANCELLED's `removed` tells the scheduler how many never fired) */
        series_fired(x);
    }
    left = (uint16_t)(x->series.left + (x->next.left > 0xFFFFu - x->series.left ? 0xFFFFu - x->series.left
                                                                             : x->next.left));
    x->series.left = 0;
    x->next.left = 0;
    return left > 255u ? 255u : (uint8_t)left;
}

static void generate(struct ex *x)
{
    uint8_t id;
    uint16_t tag;
    uint32_t tc;
    uint8_t r;

    if (++x->since_gen < x->period)
        return;
    x->since_gen = 0;
    if (x->random_ids) {
        x->rng = ex_lfsr(x->rng);
        id = (uint8_t)(x->rng & EX_OUT_ID_MASK);
    } else {
        id = x->next_id;
        x->next_id = (uint8_t)((x->next_id + 1u) & EX_OUT_ID_MASK);
    }
    tag = x->local_tag++;
    tc = x->tc.ext + x->distance;
    r = ex_list_insert(&x->list, tag, id, tc, x->tc.ext);
    if (r == EX_LIST_OK) {
        send_event(x, MM_T_LOCAL_EVENT, tag, id, tc);
    } else if (r == EX_LIST_FULL) {
        x->cnt.refused_full++;
        send_error(x, MM_ERR_LIST_FULL, MM_T_LOCAL_EVENT, tag);
    }
    /* past-due and duplicate cannot happen: distance >= 1 and tags are unique while < 65536 pend */
}

uint8_t ex_tick(struct ex *x, uint8_t port)
{
    uint8_t r = ex_tc_update(&x->tc, port);
    uint8_t already;

    series_report(x);
    if (r == EX_TC_SAME)
        return r;
    if (x->series.left != 0) {
        series_arm(x); /* a new tick: the next moment may be in it or in the one after */
        /* a moment armed late (its tick over) was written at once, by this task: no interrupt wakes the core
         * for it, so report it now and arm the next, or it waited for the next edge, a tick */
        series_report(x);
        return r;
    }
    already = exb_disarm();
    if (r != EX_TC_GLITCH || already) {
        fire_due(x, already);
        if (r != EX_TC_GLITCH && x->mode == MM_MODE_VERIFICATION)
            generate(x);
    }
    rearm(x);
    return r;
}

/* ---- receiving -------------------------------------------------------------------------------- */

static void on_schedule(struct ex *x, const uint8_t *b)
{
    uint16_t tag = mm_get_u16(b + MM_SCHEDULE_TAG);
    uint8_t id = b[MM_SCHEDULE_EVENT_ID];
    uint32_t tc = mm_get_u32(b + MM_SCHEDULE_TIMECODE);
    uint8_t r;
    uint8_t a[MM_ACK_LEN];

    if (x->mode != MM_MODE_MIXED) {
        send_error(x, MM_ERR_BAD_MODE, MM_T_SCHEDULE, tag);
        return;
    }
    if (id > EX_OUT_ID_MASK) {
        send_error(x, MM_ERR_BAD_VALUE, MM_T_SCHEDULE, tag);
        return;
    }
    if (x->series.left != 0) {
        x->cnt.refused_full++; /* a series runs: listed events do not mix with it (SPEC.md PERIODIC) */
        send_error(x, MM_ERR_LIST_FULL, MM_T_SCHEDULE, tag);
        return;
    }
    r = ex_list_insert(&x->list, tag, id, tc, x->tc.ext);
    if (r == EX_LIST_PAST_DUE) {
        x->cnt.refused_past_due++;
        send_error(x, MM_ERR_PAST_DUE, MM_T_SCHEDULE, tag);
        return;
    }
    if (r == EX_LIST_HORIZON) {
        send_error(x, MM_ERR_HORIZON, MM_T_SCHEDULE, tag); /* no COUNTERS field: the ERROR says it */
        return;
    }
    if (r == EX_LIST_DUPLICATE) {
        x->cnt.refused_duplicate++;
        send_error(x, MM_ERR_DUPLICATE, MM_T_SCHEDULE, tag);
        return;
    }
    if (r == EX_LIST_FULL) {
        x->cnt.refused_full++;
        send_error(x, MM_ERR_LIST_FULL, MM_T_SCHEDULE, tag);
        return;
    }
    rearm(x); /* arm first: the ACK takes a while to encode */
    mm_put_u16(a + MM_ACK_TAG, tag);
    a[MM_ACK_EVENT_ID] = id;
    mm_put_u32(a + MM_ACK_TIMECODE, x->tc.ext);
    mm_put_u16(a + MM_ACK_PHASE, exb_phase());
    a[MM_ACK_PENDING] = x->list.n;
    send(x, MM_T_ACK, a, sizeof a);
}

static void on_periodic(struct ex *x, const uint8_t *b)
{
    uint16_t tag = mm_get_u16(b + MM_PERIODIC_TAG);
    uint8_t id = b[MM_PERIODIC_EVENT_ID];
    uint32_t tc = mm_get_u32(b + MM_PERIODIC_TIMECODE);
    uint32_t first = mm_get_u32(b + MM_PERIODIC_FIRST);
    uint32_t period = mm_get_u32(b + MM_PERIODIC_PERIOD);
    uint32_t tick = mm_get_u32(b + MM_PERIODIC_TICK_COUNTS);
    uint16_t count = mm_get_u16(b + MM_PERIODIC_COUNT);
    uint8_t flags = b[MM_PERIODIC_FLAGS];
    uint8_t quiet = (uint8_t)(flags & MM_PERIODIC_FLAG_QUIET);
    uint32_t d = tc - x->tc.ext;
    uint8_t a[MM_ACK_LEN];

    /* SPEC.md PERIODIC: checked in this order, the first that applies answered */
    if (x->mode != MM_MODE_MIXED) {
        send_error(x, MM_ERR_BAD_MODE, MM_T_PERIODIC, tag);
        return;
    }
    /* reserved flag bits set: refused, so that a later meaning of them is never silently ignored */
    if (id > EX_OUT_ID_MASK || count == 0 || period == 0 || tick == 0 || first >= tick ||
        (flags & (uint8_t)~MM_PERIODIC_FLAG_QUIET) != 0) {
        send_error(x, MM_ERR_BAD_VALUE, MM_T_PERIODIC, tag);
        return;
    }
    if (d == 0 || d >= 0x80000000ul) {
        x->cnt.refused_past_due++;
        send_error(x, MM_ERR_PAST_DUE, MM_T_PERIODIC, tag);
        return;
    }
    if (d > MM_SCHEDULE_HORIZON_TICKS) {
        send_error(x, MM_ERR_HORIZON, MM_T_PERIODIC, tag);
        return;
    }
    if (x->next.left != 0 || x->list.n != 0) {
        x->cnt.refused_full++;
        send_error(x, MM_ERR_LIST_FULL, MM_T_PERIODIC, tag);
        return;
    }
    if (x->series.left != 0) {
        /* queued behind the running one (SPEC.md PERIODIC): a run longer than 65535 events goes on
         * without a gap, the scheduler sending the next series while this one runs */
        ex_series_start(&x->next, tag, id, tc, first, period, tick, count, quiet);
    } else {
        ex_series_start(&x->series, tag, id, tc, first, period, tick, count, quiet);
        series_arm(x); /* arm first: the ACK takes a while to encode */
    }
    mm_put_u16(a + MM_ACK_TAG, tag);
    a[MM_ACK_EVENT_ID] = id;
    mm_put_u32(a + MM_ACK_TIMECODE, x->tc.ext);
    mm_put_u16(a + MM_ACK_PHASE, exb_phase());
    a[MM_ACK_PENDING] = x->next.left != 0; /* 1: queued behind a running series */
    send(x, MM_T_ACK, a, sizeof a);
}

/*
 * Takes events out of the list: the one with `tag`, or all. The list is the core's alone (core lock);
 * the only thing the dispatch ISR shares is the armed output, precomputed from the list's head. So:
 * disarm first (atomic with respect to the ISR); if the ISR had already put the armed event on the
 * port, it has left and cannot be cancelled: report it FIRED (as ex_tick would) before removing;
 * then remove and arm whatever is the head now (rearm).
 */
static void disarm(struct ex *x)
{
    if (exb_disarm())
        fire_due(x, 1);
}

/* Empties the list (and un-arms) and ends a running series; returns the number of events removed (a
 * series' left, at most 255). */
static uint8_t flush(struct ex *x)
{
    uint8_t n;

    disarm(x);
    n = series_end(x);
    if (x->list.n != 0)
        n = x->list.n;      /* a series and listed events never run together */
    ex_list_init(&x->list);
    rearm(x);
    return n;
}

static void on_cancel(struct ex *x, const uint8_t *b)
{
    uint16_t tag = mm_get_u16(b + MM_CANCEL_TAG);
    uint8_t removed;
    uint8_t a[MM_CANCELLED_LEN];

    if (b[MM_CANCEL_FLAGS] & MM_CANCEL_ALL) {
        removed = flush(x);
    } else {
        disarm(x);
        removed = ex_list_remove(&x->list, tag);
        rearm(x);
    }
    mm_put_u16(a + MM_CANCELLED_TAG, tag);
    a[MM_CANCELLED_REMOVED] = removed;
    a[MM_CANCELLED_PENDING] = x->list.n;
    send(x, MM_T_CANCELLED, a, sizeof a);
}

static void on_mode(struct ex *x, const uint8_t *b)
{
    uint8_t mode = b[MM_MODE_MODE];
    uint8_t dispatch = b[MM_MODE_DISPATCH];
    uint8_t distance = b[MM_MODE_DISTANCE];
    uint16_t period = mm_get_u16(b + MM_MODE_PERIOD);
    uint8_t random_ids = b[MM_MODE_RANDOM_IDS];
    uint8_t cpu = b[MM_MODE_CPU_LOAD];
    uint16_t lp = mm_get_u16(b + MM_MODE_PERIODIC_PERIOD_US);
    uint16_t le = mm_get_u16(b + MM_MODE_PERIODIC_EXEC_US);

    /* Refused as a whole, nothing changed (SPEC.md MODE). The load's limits: a release costs the AVR
     * executor about 0.1 ms besides the job (port/avr/board.c), over a tenth of the CPU at the 1 ms
     * minimum period; and a job longer than half the period could starve the executor's own tasks (the
     * periodic task is above them all). */
    if (mode > MM_MODE_MIXED || dispatch > MM_DISPATCH_TASK || random_ids > 1 ||
        (mode == MM_MODE_VERIFICATION && (distance == 0 || period == 0)) || cpu > 1 ||
        (lp != 0 && lp < MM_LOAD_PERIOD_MIN_US) || 2ul * le > lp) {
        send_error(x, MM_ERR_BAD_VALUE, MM_T_MODE, 0);
        return;
    }
    /* Every MODE empties the list, one naming the current mode too (SPEC.md MODE): a run starts from a
     * clean executor. Were only a change of mode to empty it, after an interrupted run the next run's tag 1
     * would be refused as a duplicate and the interrupted run's events would fire into the new one. */
    flush(x);
    x->since_gen = 0;
    x->mode = mode;
    x->dispatch = dispatch;
    x->distance = distance;
    x->period = period;
    x->random_ids = random_ids;
    rearm(x);
    /* Every MODE sets the load too, as it empties the list: one MODE is the run's whole executor
     * configuration, and a MODE idle with zeros leaves nothing running behind a finished run. */
    x->cpu_load = cpu;
    x->load_period_us = lp;
    x->load_exec_us = le;
    exb_set_load(cpu, lp, le);
    send_status(x);
}

static void on_query(struct ex *x, const uint8_t *b)
{
    switch (b[MM_QUERY_WHAT]) {
    case MM_T_HELLO:
        send_hello(x);
        break;
    case MM_T_COUNTERS:
        send_counters(x);
        break;
    case MM_T_STATUS:
        send_status(x);
        break;
    default:
        send_error(x, MM_ERR_BAD_VALUE, MM_T_QUERY, 0);
        break;
    }
}

/* BAUD (SPEC.md 0x06): a rate the port cannot make is refused at the old rate, nothing changed. Else
 * the port switches after the frame it is sending (exb_baud_set): what the core puts now (a lone
 * delimiter, then the HELLO reporting the rate asked for) goes at the new rate, after any frame still
 * queued, which goes at the new rate too. */
static void on_baud(struct ex *x, const uint8_t *b)
{
    uint16_t h = mm_get_u16(b + MM_BAUD_HUNDREDS);
    uint16_t div = exb_baud_check(h);

    if (div == 0) {
        send_error(x, MM_ERR_BAD_VALUE, MM_T_BAUD, 0);
        return;
    }
    exb_baud_set(div);
    x->baud = (uint32_t)h * 100u;
    if (exb_tx_room() != 0)
        exb_tx_put(0);
    send_hello(x);
}

static void on_frame(struct ex *x, const uint8_t *p, uint8_t len)
{
    uint8_t type = p[MM_HDR_TYPE];
    const uint8_t *body = p + MM_HDR_LEN;

    switch (mm_msg_check(p, len)) {
    case MM_MSG_UNKNOWN_TYPE:
        x->cnt.rx_bad_message++;
        send_error(x, MM_ERR_UNKNOWN_TYPE, type, 0);
        return;
    case MM_MSG_BAD_LENGTH:
        x->cnt.rx_bad_message++;
        send_error(x, MM_ERR_BAD_LENGTH, type, 0);
        return;
    default:
        break;
    }
    x->cnt.rx_ok++;
    switch (type) {
    case MM_T_SCHEDULE:
        on_schedule(x, body);
        break;
    case MM_T_MODE:
        on_mode(x, body);
        break;
    case MM_T_QUERY:
        on_query(x, body);
        break;
    case MM_T_CANCEL:
        on_cancel(x, body);
        break;
    case MM_T_PERIODIC:
        on_periodic(x, body);
        break;
    case MM_T_BAUD:
        on_baud(x, body);
        break;
    case MM_T_FIRE:
        /* A request, but the profiler's: answered, as every request is (SPEC.md "Requests and
         * answers"). The executor never sends FIRE, so this cannot loop. */
        send_error(x, MM_ERR_UNKNOWN_TYPE, type, 0);
        break;
    default:
        /* Not a request (HELLO, ERROR, ACK, TIMECODE..., and NOP, the scheduler's receive load):
         * dropped, counted in rx_ok only. v1 answered it with ERROR, and on a looped-back line one stray
         * ERROR then made ERRORs without end. */
        break;
    }
}

void ex_rx_byte(struct ex *x, uint8_t byte)
{
    switch (mm_dec_push(&x->dec, byte)) {
    case MM_DEC_FRAME:
        on_frame(x, x->dec.buf, mm_dec_payload_len(&x->dec));
        break;
    case MM_DEC_TOO_LONG:
        x->cnt.rx_too_long++;
        break;
    case MM_DEC_BAD_COBS:
        x->cnt.rx_bad_cobs++;
        break;
    case MM_DEC_TOO_SHORT:
        x->cnt.rx_too_short++;
        break;
    case MM_DEC_BAD_CRC:
        x->cnt.rx_bad_crc++;
        break;
    default:
        break;
    }
}

void ex_init(struct ex *x, const struct ex_cfg *cfg, uint8_t port)
{
    uint8_t *p = (uint8_t *)x;
    uint16_t i;

    for (i = 0; i < sizeof *x; i++)
        p[i] = 0;
    x->cfg = cfg;
    mm_dec_init(&x->dec);
    ex_tc_init(&x->tc, port);
    ex_list_init(&x->list);
    x->mode = MM_MODE_IDLE;
    x->dispatch = cfg->dispatch;
    x->distance = 2;
    x->period = 1;
    x->rng = LFSR_SEED;
    x->baud = cfg->baud; /* the port starts at its build-time rate */
    exb_arm(EXB_ARM_NONE, 0, 0);
    exb_disarm_moment();
    /* A lone delimiter flushes whatever the receiver holds (SPEC.md section 6), then HELLO, seq 0. */
    if (exb_tx_room() != 0)
        exb_tx_put(0);
    send_hello(x);
}

/*
 * Host tests of the executor core (cmocka). The board hooks are faked: transmitted bytes go to a
 * buffer that the tests decode with the protocol library's own decoder (and compare byte for byte
 * with frames produced by the Python implementation, mmproto, where that is sensible).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ex_board.h"
#include "ex_core.h"

/* ---- fake board --------------------------------------------------------------------------------- */

static uint8_t tx[8192];
static size_t tx_n;
static size_t tx_room = 255;  /* what exb_tx_room reports */
static uint8_t outputs[256];
static size_t out_n;
static uint8_t arm_path, arm_tc8, arm_out, arm_fired;
static uint16_t phase = 0x4000;

uint16_t exb_phase(void) { return phase; }
uint8_t exb_tx_room(void) { return (uint8_t)tx_room; }
void exb_tx_put(uint8_t b) { assert_true(tx_n < sizeof tx); tx[tx_n++] = b; }
void exb_tx_kick(void) {}
void exb_output(uint8_t v) { assert_true(out_n < sizeof outputs); outputs[out_n++] = v; }
static unsigned gaps_at[256]; /* out_n when each gap was asked for: the output it came before */
static unsigned gap_n;
void exb_output_gap(void) { assert_true(gap_n < 256); gaps_at[gap_n++] = out_n; }
void exb_arm(uint8_t path, uint8_t tc8, uint8_t out) { arm_path = path; arm_tc8 = tc8; arm_out = out; arm_fired = 0; }
uint8_t exb_disarm(void)
{
    uint8_t f = arm_fired;
    arm_path = EXB_ARM_NONE;
    arm_fired = 0;
    return f;
}
/* The moment (PERIODIC): what the core armed; a test "writes" it by setting mom_done (as the board's timer
 * interrupt would), and counts the arms. */
static uint8_t mom_path, mom_tc8, mom_out, mom_done, mom_armed;
static uint16_t mom_phase;
static unsigned mom_arms;
/* A timed model of port/avr/board.c's moments (tb_on, see series_at_the_bench_rates_fires_every_moment_on_time):
 * Timer1 in counts of 4 us, a timecode edge every TB_LEN counts, the compare placed from the edge as board.c
 * places it; 0 (the default): the test sets mom_done itself. */
#define TB_LEN 17778u /* counts in a tick: 71.111 ms at 4 us */
static uint8_t tb_on, tb_port, tb_wait, tb_cmp_on;
static uint32_t tb_now, tb_edge, tb_cmp;
static unsigned tb_outs, tb_task_outs; /* moments put out; of them by the task (armed at or past their time) */
static uint32_t tb_out_at[8192];
static void tb_out(uint8_t in_task)
{
    tb_wait = 0;
    tb_cmp_on = 0;
    mom_done = 1;
    if (tb_outs < 8192u)
        tb_out_at[tb_outs] = tb_now;
    tb_outs++;
    tb_task_outs += in_task;
}
/* board.c moment_compare */
static void tb_compare(uint8_t in_task)
{
    uint32_t off = (((uint32_t)mom_phase * TB_LEN) >> 16) + 2u;
    uint32_t el = tb_now - tb_edge;

    tb_wait = 0;
    if (el + 2u >= off) {
        tb_out(in_task);
        return;
    }
    tb_cmp = tb_edge + off;
    tb_cmp_on = 1;
}
void exb_arm_moment(uint8_t path, uint8_t tc8, uint16_t ph, uint8_t out)
{
    mom_path = path;
    mom_tc8 = tc8;
    mom_phase = ph;
    mom_out = out;
    mom_done = 0;
    mom_armed = 1;
    mom_arms++;
    if (tb_on) {
        tb_cmp_on = 0;
        tb_wait = 1;
        if (tb_port == tc8)
            tb_compare(1);
    }
}
uint8_t exb_moment_done(void) { return mom_done; }
uint8_t exb_disarm_moment(void)
{
    uint8_t d = mom_done;
    mom_done = 0;
    mom_armed = 0;
    tb_wait = 0;
    tb_cmp_on = 0;
    return d;
}
uint16_t exb_stack_free(uint8_t task) { return (uint16_t)(100 + task); }
/* The load: what the core last handed to the board, how often, and the counts the board reports. */
static uint8_t load_cpu, load_calls;
static uint16_t load_period, load_exec;
static uint32_t load_loops = 0x01020304ul, load_runs = 0xA0B0C0D0ul;
static uint16_t load_overruns = 0xBEEF;
void exb_set_load(uint8_t cpu, uint16_t period_us, uint16_t exec_us)
{
    load_cpu = cpu;
    load_period = period_us;
    load_exec = exec_us;
    load_calls++;
}
void exb_load_counts(uint32_t *cpu_loops, uint32_t *periodic_runs, uint16_t *periodic_overruns)
{
    *cpu_loops = load_loops;
    *periodic_runs = load_runs;
    *periodic_overruns = load_overruns;
}
static uint8_t reset_cause = MM_RESET_WATCHDOG;
static uint16_t lost_ring = 0x1234, lost_hw = 0xBEEF;
uint8_t exb_reset_cause(void) { return reset_cause; }
void exb_rx_lost(uint16_t *ring_overflow, uint16_t *hw_overrun)
{
    *ring_overflow = lost_ring;
    *hw_overrun = lost_hw;
}

/* BAUD: the fake port makes the ATmega2560's rates (16 MHz, U2X); exb_baud_set notes the divisor and
 * where in the transmitted bytes the switch falls (bytes before it go at the old rate). */
static uint16_t baud_div;
static size_t baud_set_at;
static unsigned baud_sets;
uint16_t exb_baud_check(uint16_t hundreds)
{
    uint32_t baud = (uint32_t)hundreds * 100u, div, made;
    if (baud == 0)
        return 0;
    div = (16000000ul + 4ul * baud) / (8ul * baud);
    if (div == 0 || div > 4096u)
        return 0;
    made = 16000000ul / (8ul * div);
    return (made > baud ? made - baud : baud - made) * 40u > baud ? 0 : (uint16_t)div;
}
void exb_baud_set(uint16_t div) { baud_div = div; baud_set_at = tx_n; baud_sets++; }

/* What the pin-change ISR does when the port changes: write the armed output if it matches. */
static void fake_isr(uint8_t port)
{
    if (arm_path == EXB_ARM_ISR && port == arm_tc8 && !arm_fired) {
        outputs[out_n++] = arm_out;
        arm_fired = 1;
    }
}

/* ---- helpers ------------------------------------------------------------------------------------ */

struct frame {
    uint8_t type, seq, len;
    uint8_t body[MM_MAX_BODY];
};

static struct frame fr[512];
static size_t fr_n;

/* Decodes everything transmitted since the last call into fr[] (fr_n frames); asserts it is clean. */
static void take_frames(void)
{
    struct mm_dec d;
    size_t i;

    mm_dec_init(&d);
    fr_n = 0;
    for (i = 0; i < tx_n; i++) {
        uint8_t r = mm_dec_push(&d, tx[i]);
        assert_true(r == MM_DEC_BUSY || r == MM_DEC_FRAME);
        if (r == MM_DEC_FRAME) {
            uint8_t len = mm_dec_payload_len(&d);
            assert_int_equal(mm_msg_check(d.buf, len), MM_MSG_OK);
            assert_true(fr_n < sizeof fr / sizeof fr[0]);
            fr[fr_n].type = d.buf[0];
            fr[fr_n].seq = d.buf[1];
            fr[fr_n].len = (uint8_t)(len - 2);
            memcpy(fr[fr_n].body, d.buf + 2, (size_t)(len - 2));
            fr_n++;
        }
    }
    assert_true(mm_dec_at_frame_start(&d));
    tx_n = 0;
}

static void feed(struct ex *x, const uint8_t *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        ex_rx_byte(x, b[i]);
}

/* Encodes and feeds one frame as the scheduler would send it. */
static void feed_msg(struct ex *x, uint8_t type, uint8_t seq, const uint8_t *body, uint8_t len)
{
    struct mm_enc e;
    int16_t b;

    mm_enc_start(&e, type, seq, body, len);
    while ((b = mm_enc_next(&e)) >= 0)
        ex_rx_byte(x, (uint8_t)b);
}

static void feed_schedule(struct ex *x, uint16_t tag, uint8_t id, uint32_t tc)
{
    uint8_t b[MM_SCHEDULE_LEN];
    mm_put_u16(b + MM_SCHEDULE_TAG, tag);
    b[MM_SCHEDULE_EVENT_ID] = id;
    mm_put_u32(b + MM_SCHEDULE_TIMECODE, tc);
    feed_msg(x, MM_T_SCHEDULE, 0, b, sizeof b);
}

static void feed_mode_load(struct ex *x, uint8_t mode, uint8_t dispatch, uint8_t distance, uint16_t period,
                           uint8_t rnd, uint8_t cpu, uint16_t load_period, uint16_t load_exec)
{
    uint8_t b[MM_MODE_LEN];
    b[MM_MODE_MODE] = mode;
    b[MM_MODE_DISPATCH] = dispatch;
    b[MM_MODE_DISTANCE] = distance;
    mm_put_u16(b + MM_MODE_PERIOD, period);
    b[MM_MODE_RANDOM_IDS] = rnd;
    b[MM_MODE_CPU_LOAD] = cpu;
    mm_put_u16(b + MM_MODE_PERIODIC_PERIOD_US, load_period);
    mm_put_u16(b + MM_MODE_PERIODIC_EXEC_US, load_exec);
    feed_msg(x, MM_T_MODE, 0, b, sizeof b);
}

/* A MODE with no load (version 2's fields only). */
static void feed_mode(struct ex *x, uint8_t mode, uint8_t dispatch, uint8_t distance, uint16_t period, uint8_t rnd)
{
    feed_mode_load(x, mode, dispatch, distance, period, rnd, 0, 0, 0);
}

static void feed_query(struct ex *x, uint8_t what)
{
    feed_msg(x, MM_T_QUERY, 0, &what, 1);
}

static const struct ex_cfg cfg = {16000000ul, 250000ul, 17778ul, 9600ul, MM_DISPATCH_ISR};

static struct ex X;

static void boot(uint8_t port)
{
    tx_n = 0;
    out_n = 0;
    gap_n = 0;
    tx_room = 255;
    phase = 0x4000;
    tb_on = 0;
    ex_init(&X, &cfg, port);
}

/* Boot, enter mixed mode with the given dispatch path, discard the frames so far. */
static void boot_mixed(uint8_t port, uint8_t dispatch)
{
    boot(port);
    feed_mode(&X, MM_MODE_MIXED, dispatch, 0, 0, 0);
    take_frames();
    assert_int_equal(fr_n, 2); /* HELLO, STATUS */
}

static void expect_error(const struct frame *f, uint8_t code, uint8_t ref_type, uint16_t tag, uint32_t tc)
{
    assert_int_equal(f->type, MM_T_ERROR);
    assert_int_equal(f->body[MM_ERROR_CODE], code);
    assert_int_equal(f->body[MM_ERROR_REF_TYPE], ref_type);
    assert_int_equal(mm_get_u16(f->body + MM_ERROR_REF_TAG), tag);
    assert_int_equal(mm_get_u32(f->body + MM_ERROR_TIMECODE), tc);
}

static void get_counters(uint16_t c[13])
{
    int i;
    tx_n = 0; /* earlier frames are the caller's business */
    feed_query(&X, MM_T_COUNTERS);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_COUNTERS);
    assert_int_equal(fr[0].len, MM_COUNTERS_LEN);
    for (i = 0; i < 13; i++)
        c[i] = mm_get_u16(fr[0].body + 2 * i);
}
enum { C_OK, C_CRC, C_COBS, C_LONG, C_SHORT, C_MSG, C_TXDROP, C_DUP, C_FULL, C_PAST, C_GLITCH, C_RING, C_HW };

/* ---- timecode extension ------------------------------------------------------------------------- */

static void tc_steps_and_8bit_wrap(void **s)
{
    struct ex_tc t;
    unsigned i;
    (void)s;
    ex_tc_init(&t, 250);
    assert_int_equal(t.ext, 250);
    assert_int_equal(ex_tc_update(&t, 250), EX_TC_SAME);
    for (i = 251; i < 251 + 600; i++)
        assert_int_equal(ex_tc_update(&t, (uint8_t)i), EX_TC_STEP);
    assert_int_equal(t.ext, 850); /* crossed the 8-bit wrap three times */
    assert_int_equal(t.glitches, 0);
}

static void tc_32bit_wrap(void **s)
{
    struct ex_tc t;
    (void)s;
    ex_tc_init(&t, 0xFE);
    t.ext = 0xFFFFFFFEul;
    assert_int_equal(ex_tc_update(&t, 0xFF), EX_TC_STEP);
    assert_int_equal(t.ext, 0xFFFFFFFFul);
    assert_int_equal(ex_tc_update(&t, 0x00), EX_TC_STEP);
    assert_int_equal(t.ext, 0);
    assert_int_equal(ex_tc_update(&t, 0x01), EX_TC_STEP);
    assert_int_equal(t.ext, 1);
}

static void tc_glitch_noise_is_counted_not_applied(void **s)
{
    struct ex_tc t;
    (void)s;
    ex_tc_init(&t, 10);
    assert_int_equal(ex_tc_update(&t, 0x8A), EX_TC_GLITCH); /* a bit flipped */
    assert_int_equal(t.ext, 10);
    assert_int_equal(ex_tc_update(&t, 10), EX_TC_SAME);      /* back: noise */
    assert_int_equal(ex_tc_update(&t, 11), EX_TC_STEP);
    assert_int_equal(ex_tc_update(&t, 9), EX_TC_GLITCH);     /* backwards */
    assert_int_equal(ex_tc_update(&t, 12), EX_TC_STEP);      /* 12 is old + 1: 9 was noise */
    assert_int_equal(t.ext, 12);
    assert_int_equal(t.glitches, 2);
}

static void tc_glitch_confirmed_resyncs(void **s)
{
    struct ex_tc t;
    (void)s;
    ex_tc_init(&t, 0xF0);
    t.ext = 0x12F0;
    assert_int_equal(ex_tc_update(&t, 0x05), EX_TC_GLITCH); /* jump of 21 across the wrap */
    assert_int_equal(t.ext, 0x12F0);
    assert_int_equal(ex_tc_update(&t, 0x06), EX_TC_RESYNC); /* confirmed by the next tick */
    assert_int_equal(t.ext, 0x1306);
    assert_int_equal(ex_tc_update(&t, 0x07), EX_TC_STEP);
    assert_int_equal(t.glitches, 1);
    /* a glitch value that stays put is confirmed by the next distinct read equal to it (+0) */
    assert_int_equal(ex_tc_update(&t, 0x40), EX_TC_GLITCH);
    assert_int_equal(ex_tc_update(&t, 0x40), EX_TC_RESYNC);
    assert_int_equal(t.ext, 0x1340);
}

static const uint8_t *rd_seq;
static unsigned rd_i, rd_len;
static uint8_t rd(void)
{
    uint8_t v = rd_seq[rd_i < rd_len ? rd_i : rd_len - 1];
    rd_i++;
    return v;
}

static void tc_read_stable_waits_for_two_equal_reads(void **s)
{
    static const uint8_t changing[] = {0x0F, 0x1F, 0x10, 0x10, 0x99};
    static const uint8_t noisy[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    (void)s;
    rd_seq = changing; rd_len = sizeof changing; rd_i = 0;
    assert_int_equal(ex_tc_read_stable(rd), 0x10); /* 0x0F -> 0x10 read half-changed twice */
    assert_int_equal(rd_i, 4);
    rd_seq = noisy; rd_len = sizeof noisy; rd_i = 0;
    assert_int_equal(ex_tc_read_stable(rd), EX_TC_MAX_READS); /* bounded: gives the last read */
    assert_int_equal(rd_i, EX_TC_MAX_READS);
}

/* ---- schedule list ------------------------------------------------------------------------------ */

static void list_orders_by_timecode_fifo_on_ties(void **s)
{
    struct ex_list l;
    static const uint32_t tcs[] = {50, 20, 30, 20, 99, 21};
    uint8_t i;
    (void)s;
    ex_list_init(&l);
    for (i = 0; i < 6; i++)
        assert_int_equal(ex_list_insert(&l, (uint16_t)(100 + i), i, tcs[i], 10), EX_LIST_OK);
    assert_int_equal(l.n, 6);
    assert_int_equal(l.e[0].tag, 101); assert_int_equal(l.e[1].tag, 103); /* both 20, arrival order */
    assert_int_equal(l.e[2].tag, 105); assert_int_equal(l.e[3].tag, 102);
    assert_int_equal(l.e[4].tag, 100); assert_int_equal(l.e[5].tag, 104);
    assert_int_equal(ex_list_due(&l, 19), 0);
    assert_int_equal(ex_list_due(&l, 20), 2);
    assert_int_equal(ex_list_due(&l, 30), 4);
    ex_list_pop(&l, 2);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.e[0].tag, 105);
}

static void list_refuses_past_due_duplicate_full(void **s)
{
    struct ex_list l;
    uint8_t i;
    (void)s;
    ex_list_init(&l);
    assert_int_equal(ex_list_insert(&l, 1, 0, 10, 10), EX_LIST_PAST_DUE); /* not after now */
    assert_int_equal(ex_list_insert(&l, 1, 0, 9, 10), EX_LIST_PAST_DUE);
    assert_int_equal(ex_list_insert(&l, 1, 0, 11, 10), EX_LIST_OK);
    assert_int_equal(ex_list_insert(&l, 1, 3, 12, 10), EX_LIST_DUPLICATE);
    assert_int_equal(ex_list_insert(&l, 1, 3, 5, 10), EX_LIST_PAST_DUE); /* past-due is checked first */
    for (i = 2; i <= EX_LIST_CAPACITY; i++)
        assert_int_equal(ex_list_insert(&l, i, 0, 100u - i, 10), EX_LIST_OK);
    assert_int_equal(l.n, EX_LIST_CAPACITY);
    assert_int_equal(ex_list_insert(&l, 999, 0, 50, 10), EX_LIST_FULL);
    assert_int_equal(ex_list_insert(&l, 5, 0, 50, 10), EX_LIST_DUPLICATE); /* duplicate before full */
    for (i = 1; i < l.n; i++)
        assert_true(l.e[i - 1].tc <= l.e[i].tc);
}

static void list_orders_across_32bit_wrap(void **s)
{
    struct ex_list l;
    (void)s;
    ex_list_init(&l);
    assert_int_equal(ex_list_insert(&l, 1, 0, 5, 0xFFFFFFF0ul), EX_LIST_OK);
    assert_int_equal(ex_list_insert(&l, 2, 0, 0xFFFFFFFFul, 0xFFFFFFF0ul), EX_LIST_OK);
    assert_int_equal(ex_list_insert(&l, 3, 0, 0xFFFFFFE0ul, 0xFFFFFFF0ul), EX_LIST_PAST_DUE);
    assert_int_equal(l.e[0].tag, 2);
    assert_int_equal(l.e[1].tag, 1);
    assert_int_equal(ex_list_due(&l, 0xFFFFFFFFul), 1);
    assert_int_equal(ex_list_due(&l, 5), 2);
}

/* ---- protocol handling -------------------------------------------------------------------------- */

/* Wire bytes produced by the Python implementation (mmproto), see the comments. */
/* Hello(6, 2, 0x0600, 16000000, 250000, 17778, 9600, 0, reset_cause=0x08).wire(0) */
static const uint8_t HELLO_WIRE[] = {0x02, 0x01, 0x03, 0x06, 0x02, 0x02, 0x06, 0x03, 0x24, 0xf4, 0x04, 0x90, 0xd0,
                                     0x03, 0x03, 0x72, 0x45, 0x01, 0x03, 0x80, 0x25, 0x01, 0x01, 0x04, 0x08, 0xad,
                                     0xdf, 0x00};
/* Ack(0x1234, 5, 0x105, 0x4000, 1).wire(2) */
static const uint8_t ACK_WIRE[] = {0x08, 0x21, 0x02, 0x34, 0x12, 0x05, 0x05, 0x01, 0x01, 0x01, 0x05, 0x40, 0x01,
                                   0xfc, 0xb5, 0x00};
/* Schedule(0x1234, 5, 0x107).wire(0) */
static const uint8_t SCHED_WIRE[] = {0x02, 0x20, 0x06, 0x34, 0x12, 0x05, 0x07, 0x01, 0x01, 0x03, 0x4b, 0xf3, 0x00};
/* Fired(0x1234, 5, 0x107).wire(3) */
static const uint8_t FIRED_WIRE[] = {0x08, 0x25, 0x03, 0x34, 0x12, 0x05, 0x07, 0x01, 0x01, 0x03, 0xf2, 0x4c, 0x00};

static void boot_sends_flush_then_hello_seq0(void **s)
{
    (void)s;
    boot(0x05);
    assert_int_equal(tx_n, 1 + sizeof HELLO_WIRE);
    assert_int_equal(tx[0], 0x00);
    assert_memory_equal(tx + 1, HELLO_WIRE, sizeof HELLO_WIRE);
    assert_int_equal(arm_path, EXB_ARM_NONE);
    /* QUERY(HELLO) answers HELLO again (running seq) */
    tx_n = 0;
    feed_query(&X, MM_T_HELLO);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_HELLO);
    assert_int_equal(fr[0].seq, 1);
    assert_int_equal(fr[0].body[MM_HELLO_PROTO_VERSION], MM_PROTO_VERSION);
    assert_int_equal(fr[0].body[MM_HELLO_NODE_KIND], MM_NODE_EXECUTOR);
    assert_int_equal(mm_get_u32(fr[0].body + MM_HELLO_TICK_COUNTS), 17778);
    /* reset_cause: the board's value as it is, whatever bits it holds */
    reset_cause = MM_RESET_POWER_ON | MM_RESET_EXTERNAL | MM_RESET_BROWN_OUT | MM_RESET_JTAG;
    feed_query(&X, MM_T_HELLO);
    take_frames();
    assert_int_equal(fr[0].body[MM_HELLO_RESET_CAUSE], 0x17);
    reset_cause = MM_RESET_WATCHDOG;
}

static void mode_answers_status(void **s)
{
    const struct frame *f;
    (void)s;
    boot(0x20);
    tx_n = 0;
    feed_mode(&X, MM_MODE_MIXED, MM_DISPATCH_TASK, 0, 0, 0);
    take_frames();
    assert_int_equal(fr_n, 1);
    f = &fr[0];
    assert_int_equal(f->type, MM_T_STATUS);
    assert_int_equal(f->seq, 1);
    assert_int_equal(f->body[MM_STATUS_MODE], MM_MODE_MIXED);
    assert_int_equal(f->body[MM_STATUS_DISPATCH], MM_DISPATCH_TASK);
    assert_int_equal(mm_get_u32(f->body + MM_STATUS_TIMECODE), 0x20);
    assert_int_equal(f->body[MM_STATUS_PENDING], 0);
    assert_int_equal(f->body[MM_STATUS_CAPACITY], EX_LIST_CAPACITY);
    assert_int_equal(mm_get_u32(f->body + MM_STATUS_FIRED), 0);
    assert_int_equal(mm_get_u16(f->body + MM_STATUS_STACK_TIMECODE), 100);
    assert_int_equal(mm_get_u16(f->body + MM_STATUS_STACK_SERIAL), 101);
    assert_int_equal(mm_get_u16(f->body + MM_STATUS_STACK_STATUS), 102);
    /* bad values are refused and change nothing */
    feed_mode(&X, 3, 0, 0, 0, 0);
    feed_mode(&X, MM_MODE_MIXED, 2, 0, 0, 0);
    feed_mode(&X, MM_MODE_VERIFICATION, 0, 0, 1, 0); /* distance 0 */
    feed_mode(&X, MM_MODE_VERIFICATION, 0, 1, 0, 0); /* period 0 */
    take_frames();
    assert_int_equal(fr_n, 4);
    for (size_t i = 0; i < 4; i++)
        expect_error(&fr[i], MM_ERR_BAD_VALUE, MM_T_MODE, 0, 0x20);
    feed_query(&X, MM_T_STATUS);
    take_frames();
    assert_int_equal(fr[0].body[MM_STATUS_MODE], MM_MODE_MIXED);
    assert_int_equal(fr[0].body[MM_STATUS_DISPATCH], MM_DISPATCH_TASK);
}

static void schedule_outside_mixed_is_bad_mode_and_bad_id_is_bad_value(void **s)
{
    (void)s;
    boot(0x03);
    tx_n = 0;
    feed_schedule(&X, 7, 1, 10);
    take_frames();
    assert_int_equal(fr_n, 1);
    expect_error(&fr[0], MM_ERR_BAD_MODE, MM_T_SCHEDULE, 7, 3);
    feed_mode(&X, MM_MODE_MIXED, 0, 0, 0, 0);
    feed_schedule(&X, 8, 8, 10);
    take_frames();
    assert_int_equal(fr_n, 2);
    expect_error(&fr[1], MM_ERR_BAD_VALUE, MM_T_SCHEDULE, 8, 3);
    assert_int_equal(X.list.n, 0);
}

static void schedule_ack_isr_dispatch_fired(void **s)
{
    (void)s;
    boot_mixed(0x03, MM_DISPATCH_ISR);
    tx_n = 0;
    ex_tick(&X, 0x04);
    ex_tick(&X, 0x05);
    assert_int_equal(X.tc.ext, 5);
    X.tc.ext = 0x105;            /* pretend we have been up for 256 more ticks */
    take_frames();
    assert_int_equal(fr_n, 0);   /* nothing scheduled, nothing sent */
    feed(&X, SCHED_WIRE, sizeof SCHED_WIRE); /* tag 0x1234, id 5, tc 0x107: two ticks ahead */
    assert_int_equal(tx_n, sizeof ACK_WIRE);
    assert_memory_equal(tx, ACK_WIRE, sizeof ACK_WIRE); /* seq 2 after HELLO 0, STATUS 1 */
    tx_n = 0;
    assert_int_equal(arm_path, EXB_ARM_NONE); /* two ticks ahead: not armed yet */
    fake_isr(0x06);
    ex_tick(&X, 0x06);
    assert_int_equal(out_n, 0);
    assert_int_equal(arm_path, EXB_ARM_ISR);   /* now it is: precomputed output for tick 0x107 */
    assert_int_equal(arm_tc8, 0x07);
    assert_int_equal(arm_out, 0x05 | EX_OUT_STROBE);
    fake_isr(0x07);                            /* the ISR writes it... */
    assert_int_equal(out_n, 1);
    assert_int_equal(outputs[0], 0x0D);
    ex_tick(&X, 0x07);                         /* ...and the task only reports it */
    assert_int_equal(out_n, 1);
    assert_int_equal(tx_n, sizeof FIRED_WIRE);
    assert_memory_equal(tx, FIRED_WIRE, sizeof FIRED_WIRE);
    assert_int_equal(X.list.n, 0);
    assert_int_equal(X.fired, 1);
    assert_int_equal(arm_path, EXB_ARM_NONE);
}

static void task_dispatch_and_strobe_toggles(void **s)
{
    (void)s;
    boot_mixed(0xFE, MM_DISPATCH_TASK);
    feed_schedule(&X, 1, 3, 0x100);  /* across the 8-bit wrap */
    feed_schedule(&X, 2, 3, 0x100);  /* same id, same tick: must still be two edges */
    feed_schedule(&X, 3, 6, 0x101);
    take_frames();
    assert_int_equal(fr_n, 3);
    assert_int_equal(fr[2].body[MM_ACK_PENDING], 3);
    ex_tick(&X, 0xFF);
    assert_int_equal(arm_path, EXB_ARM_TASK);
    assert_int_equal(arm_tc8, 0x00);
    assert_int_equal(arm_out, 0x0B);
    fake_isr(0x00);                 /* not armed for the ISR: writes nothing */
    assert_int_equal(out_n, 0);
    gap_n = 0;
    ex_tick(&X, 0x00);              /* task path without its fast path: the core writes */
    assert_int_equal(out_n, 2);
    assert_int_equal(outputs[0], 0x0B);  /* id 3, strobe high */
    assert_int_equal(outputs[1], 0x03);  /* id 3, strobe low: a second, distinct edge */
    assert_int_equal(gap_n, 1);          /* the profiler's gap between them, and only there */
    assert_int_equal(gaps_at[0], 1);
    take_frames();
    assert_int_equal(fr_n, 2);
    assert_int_equal(fr[0].type, MM_T_FIRED);
    assert_int_equal(mm_get_u16(fr[0].body), 1);
    assert_int_equal(mm_get_u16(fr[1].body), 2);
    assert_int_equal(mm_get_u32(fr[1].body + MM_FIRED_TIMECODE), 0x100);
    assert_int_equal(arm_out, 0x0E);     /* next: id 6, strobe high again */
    ex_tick(&X, 0x01);
    assert_int_equal(outputs[2], 0x0E);
}

static void past_due_duplicate_full_refused_and_counted(void **s)
{
    uint16_t c[13];
    uint16_t i;
    (void)s;
    boot_mixed(0x40, MM_DISPATCH_ISR);
    feed_schedule(&X, 1, 0, 0x40);      /* the current tick: past due */
    feed_schedule(&X, 2, 0, 0x3F);
    feed_schedule(&X, 3, 0, 0x42);      /* ok */
    feed_schedule(&X, 3, 1, 0x43);      /* duplicate tag */
    take_frames();
    assert_int_equal(fr_n, 4);
    expect_error(&fr[0], MM_ERR_PAST_DUE, MM_T_SCHEDULE, 1, 0x40);
    expect_error(&fr[1], MM_ERR_PAST_DUE, MM_T_SCHEDULE, 2, 0x40);
    assert_int_equal(fr[2].type, MM_T_ACK);
    expect_error(&fr[3], MM_ERR_DUPLICATE, MM_T_SCHEDULE, 3, 0x40);
    /* a flood: 40 more, the list holds 16 */
    for (i = 0; i < 40; i++)
        feed_schedule(&X, (uint16_t)(100 + i), (uint8_t)(i & 7), 0x50u + i);
    take_frames();
    assert_int_equal(fr_n, 40);
    for (i = 0; i < 15; i++)
        assert_int_equal(fr[i].type, MM_T_ACK);
    assert_int_equal(fr[14].body[MM_ACK_PENDING], EX_LIST_CAPACITY);
    for (i = 15; i < 40; i++)
        expect_error(&fr[i], MM_ERR_LIST_FULL, MM_T_SCHEDULE, (uint16_t)(100 + i), 0x40);
    get_counters(c);
    assert_int_equal(c[C_OK], 1 + 4 + 40 + 1); /* MODE, 4, flood, this QUERY */
    assert_int_equal(c[C_PAST], 2);
    assert_int_equal(c[C_DUP], 1);
    assert_int_equal(c[C_FULL], 25);
    assert_int_equal(c[C_GLITCH], 0);
    /* once a tag has fired it may be used again */
    ex_tick(&X, 0x41);
    ex_tick(&X, 0x42);
    take_frames();
    assert_int_equal(fr[0].type, MM_T_FIRED);
    feed_schedule(&X, 3, 1, 0x60);
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
}

static void garbage_and_corrupt_frames_counted_and_dropped(void **s)
{
    uint8_t junk[64];
    uint8_t bad[sizeof SCHED_WIRE];
    uint8_t b[MM_SCHEDULE_LEN + 1] = {0};
    uint16_t c[13];
    size_t i;
    (void)s;
    boot_mixed(0x00, MM_DISPATCH_ISR);
    /* 1. line noise with no delimiter, running into a good frame: that frame is lost (bad CRC or
     * COBS), the next one decodes. */
    for (i = 0; i < 20; i++)
        junk[i] = (uint8_t)(0x11 * i + 3); /* never 0x00 for i < 45 */
    feed(&X, junk, 20);
    feed(&X, SCHED_WIRE, sizeof SCHED_WIRE);
    /* 2. too long: 64 non-zero bytes then a delimiter */
    memset(junk, 0x55, sizeof junk);
    feed(&X, junk, sizeof junk);
    ex_rx_byte(&X, 0);
    /* 3. a flipped bit: bad CRC */
    memcpy(bad, SCHED_WIRE, sizeof bad);
    bad[5] ^= 0x40;
    feed(&X, bad, sizeof bad);
    /* 4. bad COBS: code announces more than is left */
    {
        static const uint8_t cobs[] = {0x09, 0x20, 0x00};
        feed(&X, cobs, sizeof cobs);
    }
    /* 5. too short: three decoded bytes */
    {
        static const uint8_t shortf[] = {0x04, 0x20, 0x01, 0x02, 0x00};
        feed(&X, shortf, sizeof shortf);
    }
    /* 6. valid CRC, unknown type; 7. valid CRC, wrong length; 8. empty frames are ignored */
    feed_msg(&X, 0x7E, 0, b, 2);
    feed_msg(&X, MM_T_SCHEDULE, 0, b, MM_SCHEDULE_LEN + 1);
    ex_rx_byte(&X, 0);
    ex_rx_byte(&X, 0);
    take_frames();
    assert_int_equal(fr_n, 2);
    expect_error(&fr[0], MM_ERR_UNKNOWN_TYPE, 0x7E, 0, 0);
    expect_error(&fr[1], MM_ERR_BAD_LENGTH, MM_T_SCHEDULE, 0, 0);
    get_counters(c);
    assert_int_equal(c[C_OK], 1 + 1);  /* MODE and this QUERY: the schedule after junk was lost */
    assert_int_equal(c[C_LONG], 1);
    assert_int_equal(c[C_CRC] + c[C_COBS], 1 + 1 + 1); /* junk+frame, flipped bit, bad cobs */
    assert_int_equal(c[C_COBS] >= 1, 1);
    assert_int_equal(c[C_SHORT], 1);
    assert_int_equal(c[C_MSG], 2);
    /* and the link still works */
    feed(&X, SCHED_WIRE, sizeof SCHED_WIRE);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_ACK);
}

static void tx_full_drops_whole_frames_and_counts(void **s)
{
    uint16_t c[13];
    uint8_t i;
    (void)s;
    boot_mixed(0x00, MM_DISPATCH_ISR);
    tx_room = MM_WIRE_LEN(MM_ACK_LEN) - 1; /* no room for an ACK */
    for (i = 0; i < 3; i++)
        feed_schedule(&X, i, 0, 10);
    assert_int_equal(tx_n, 0);
    tx_room = 255;
    feed_schedule(&X, 9, 0, 10);
    get_counters(c);
    /* dropped frames still use their seq: the receiver counts three lost frames */
    assert_int_equal(c[C_TXDROP], 3);
    assert_int_equal(X.list.n, 4);
    tx_n = 0;
    feed_query(&X, MM_T_STATUS);
    take_frames();
    assert_int_equal(fr[0].seq, 2 + 3 + 1 + 1);
}

static void glitch_counted_in_counters_and_no_false_fire(void **s)
{
    uint16_t c[13];
    (void)s;
    boot_mixed(0x10, MM_DISPATCH_TASK);
    feed_schedule(&X, 1, 2, 0x12);
    ex_tick(&X, 0x11);
    ex_tick(&X, 0x31);           /* a stuck bit */
    ex_tick(&X, 0x11);           /* gone */
    assert_int_equal(out_n, 0);
    ex_tick(&X, 0x12);
    assert_int_equal(out_n, 1);
    get_counters(c);
    assert_int_equal(c[C_GLITCH], 1);
}

static void verification_mode_generates_sequential_and_random(void **s)
{
    uint16_t r = 0xACE1;
    unsigned i, n_local = 0, n_fired = 0;
    (void)s;
    boot(0x00);
    feed_mode(&X, MM_MODE_VERIFICATION, MM_DISPATCH_ISR, 2, 3, 0);
    take_frames();
    assert_int_equal(fr_n, 2);
    for (i = 1; i <= 12; i++) {
        fake_isr((uint8_t)i);
        ex_tick(&X, (uint8_t)i);
    }
    take_frames();
    /* events created at ticks 3, 6, 9, 12 for 5, 8, 11, 14; fired at 5, 8, 11 */
    for (i = 0; i < fr_n; i++) {
        if (fr[i].type == MM_T_LOCAL_EVENT) {
            assert_int_equal(mm_get_u16(fr[i].body + MM_LOCAL_EVENT_TAG), n_local);
            assert_int_equal(fr[i].body[MM_LOCAL_EVENT_EVENT_ID], n_local & 7);
            assert_int_equal(mm_get_u32(fr[i].body + MM_LOCAL_EVENT_TIMECODE), 3 * (n_local + 1) + 2);
            n_local++;
        } else {
            assert_int_equal(fr[i].type, MM_T_FIRED);
            assert_int_equal(mm_get_u32(fr[i].body + MM_FIRED_TIMECODE), 3 * (n_fired + 1) + 2);
            n_fired++;
        }
    }
    assert_int_equal(n_local, 4);
    assert_int_equal(n_fired, 3);
    assert_int_equal(out_n, 3); /* all three by the (fake) ISR, at the armed tick */
    assert_int_equal(outputs[0], 0x08 | 0);
    assert_int_equal(outputs[1], 0x00 | 1);
    assert_int_equal(outputs[2], 0x08 | 2);
    /* SCHEDULE is refused in verification mode */
    feed_schedule(&X, 77, 1, 100);
    take_frames();
    expect_error(&fr[0], MM_ERR_BAD_MODE, MM_T_SCHEDULE, 77, 12);
    /* random ids: distance 1, period 1: one event per tick, ids from the LFSR */
    feed_mode(&X, MM_MODE_VERIFICATION, MM_DISPATCH_ISR, 1, 1, 1);
    take_frames();
    assert_int_equal(X.list.n, 0); /* every MODE empties the list, the same mode too (SPEC v2) */
    for (i = 13; i < 13 + 20; i++)
        ex_tick(&X, (uint8_t)i);
    take_frames();
    n_local = 0;
    for (i = 0; i < fr_n; i++) {
        if (fr[i].type != MM_T_LOCAL_EVENT)
            continue;
        r = ex_lfsr(r);
        assert_int_equal(fr[i].body[MM_LOCAL_EVENT_EVENT_ID], r & 7);
        n_local++;
    }
    assert_int_equal(n_local, 20);
    /* ids are not all equal (the LFSR moves) */
    {
        unsigned seen = 0;
        for (i = 0; i < fr_n; i++)
            if (fr[i].type == MM_T_LOCAL_EVENT)
                seen |= 1u << fr[i].body[MM_LOCAL_EVENT_EVENT_ID];
        assert_true(seen != (seen & -seen));
    }
}

static void leaving_a_mode_clears_the_list(void **s)
{
    (void)s;
    boot_mixed(0x00, MM_DISPATCH_ISR);
    feed_schedule(&X, 1, 1, 1);
    assert_int_equal(arm_path, EXB_ARM_ISR);
    feed_mode(&X, MM_MODE_IDLE, MM_DISPATCH_ISR, 0, 0, 0);
    assert_int_equal(X.list.n, 0);
    assert_int_equal(arm_path, EXB_ARM_NONE);
    ex_tick(&X, 1);
    assert_int_equal(out_n, 0);
}

static void query_unknown_what_is_bad_value(void **s)
{
    (void)s;
    boot(0);
    tx_n = 0;
    feed_query(&X, 0x55);
    take_frames();
    assert_int_equal(fr_n, 1);
    expect_error(&fr[0], MM_ERR_BAD_VALUE, MM_T_QUERY, 0, 0);
}

/* ---- protocol version 2 --------------------------------------------------------------------------- */

static void counters_carry_rx_lost_from_the_board(void **s)
{
    uint16_t c[13];
    (void)s;
    boot(0);
    get_counters(c);
    assert_int_equal(c[C_RING], 0x1234);
    assert_int_equal(c[C_HW], 0xBEEF);
    lost_ring = 0xFFFF; /* wraps like every counter: the board's value as it is */
    lost_hw = 1;
    get_counters(c);
    assert_int_equal(c[C_RING], 0xFFFF);
    assert_int_equal(c[C_HW], 1);
    lost_ring = 0x1234;
    lost_hw = 0xBEEF;
}

static void feed_frame(struct ex *x, const struct frame *f)
{
    feed_msg(x, f->type, f->seq, f->body, f->len);
}

static size_t count_type(uint8_t type)
{
    size_t i, n = 0;
    for (i = 0; i < fr_n; i++)
        n += fr[i].type == type;
    return n;
}

/* With its output looped back onto its input, an executor that answers every frame answers its own HELLO
 * with ERROR and every ERROR with another, for ever: only requests (and unknown types / wrong lengths) are
 * answered. */
static void looped_back_line_settles(void **s)
{
    static struct frame back[512];
    size_t nback, i, round, errors = 0;
    uint8_t b[MM_SCHEDULE_LEN + 1] = {0};
    uint8_t e[MM_ERROR_LEN] = {MM_ERR_LIST_FULL, MM_T_SCHEDULE, 1, 0, 0, 0, 0, 0};
    uint16_t c[13];
    (void)s;
    boot_mixed(0x10, MM_DISPATCH_ISR);
    /* what enters the loop: the boot HELLO, a stray ERROR, a QUERY (a request: answered once), an
     * unknown type and a wrong length (answered with one ERROR each), a SCHEDULE (ACK) */
    tx_n = 0;
    ex_init(&X, &cfg, 0x10);
    feed_mode(&X, MM_MODE_MIXED, MM_DISPATCH_ISR, 0, 0, 0);
    feed_msg(&X, MM_T_ERROR, 7, e, sizeof e);
    feed_query(&X, MM_T_HELLO);
    feed_msg(&X, 0x7E, 0, b, 2);
    feed_msg(&X, MM_T_SCHEDULE, 0, b, MM_SCHEDULE_LEN + 1);
    feed_schedule(&X, 5, 1, 0x20);
    for (round = 0; round < 20; round++) {
        take_frames();
        errors += count_type(MM_T_ERROR);
        if (round == 0)
            assert_int_equal(errors, 2); /* UNKNOWN_TYPE and BAD_LENGTH, nothing for the stray ERROR */
        else
            assert_int_equal(fr_n, 0);   /* everything it sent comes back and is dropped */
        nback = fr_n;
        memcpy(back, fr, nback * sizeof fr[0]);
        for (i = 0; i < nback; i++)
            feed_frame(&X, &back[i]);
    }
    assert_int_equal(errors, 2);
    get_counters(c);
    assert_int_equal(c[C_MSG], 2);
}

/* Known types the executor does not handle are dropped silently and counted in rx_ok only. */
static void non_requests_are_dropped_silently(void **s)
{
    static const uint8_t types[] = {MM_T_HELLO, MM_T_ERROR, MM_T_COUNTERS, MM_T_TIMECODE, MM_T_RESULT,
                                    MM_T_ACK, MM_T_STATUS, MM_T_LOCAL_EVENT, MM_T_FIRED, MM_T_CANCELLED,
                                    MM_T_NOP /* the receive load of --executor-load rx=N */};
    uint8_t b[MM_MAX_BODY] = {0};
    uint16_t c[13];
    size_t i;
    (void)s;
    boot(0);
    tx_n = 0;
    for (i = 0; i < sizeof types; i++)
        feed_msg(&X, types[i], 0, b, mm_msg_body_len(types[i]));
    take_frames();
    assert_int_equal(fr_n, 0);
    get_counters(c);
    assert_int_equal(c[C_OK], sizeof types + 1);
    assert_int_equal(c[C_MSG], 0);
    /* FIRE is a request, the profiler's: an executor answers it with ERROR UNKNOWN_TYPE */
    feed_msg(&X, MM_T_FIRE, 0, b, MM_FIRE_LEN);
    take_frames();
    assert_int_equal(fr_n, 1);
    expect_error(&fr[0], MM_ERR_UNKNOWN_TYPE, MM_T_FIRE, 0, 0);
}

static void schedule_horizon_boundaries(void **s)
{
    const uint32_t now = 0xFFFFF000ul; /* the horizon reaches across the 32-bit wrap */
    (void)s;
    boot_mixed(0x00, MM_DISPATCH_ISR);
    X.tc.ext = now;
    feed_schedule(&X, 1, 0, (uint32_t)(now + 32768ul));      /* exactly 32768 ahead: accepted */
    feed_schedule(&X, 2, 0, (uint32_t)(now + 32769ul));      /* one more: HORIZON */
    feed_schedule(&X, 3, 0, (uint32_t)(now + 0x7FFFFFFFul)); /* the most a wrap-only check takes */
    feed_schedule(&X, 4, 0, (uint32_t)(now + 0x80000000ul)); /* half the range: behind us, PAST_DUE */
    feed_schedule(&X, 5, 0, now);                /* the current tick: PAST_DUE */
    feed_schedule(&X, 1, 0, (uint32_t)(now + 40000ul));      /* beyond the horizon and a duplicate: HORIZON first */
    take_frames();
    assert_int_equal(fr_n, 6);
    assert_int_equal(fr[0].type, MM_T_ACK);
    expect_error(&fr[1], MM_ERR_HORIZON, MM_T_SCHEDULE, 2, now);
    expect_error(&fr[2], MM_ERR_HORIZON, MM_T_SCHEDULE, 3, now);
    expect_error(&fr[3], MM_ERR_PAST_DUE, MM_T_SCHEDULE, 4, now);
    expect_error(&fr[4], MM_ERR_PAST_DUE, MM_T_SCHEDULE, 5, now);
    expect_error(&fr[5], MM_ERR_HORIZON, MM_T_SCHEDULE, 1, now);
    assert_int_equal(X.list.n, 1);
    /* a full list still refuses an in-horizon SCHEDULE with LIST_FULL, an out-of-horizon one with HORIZON */
    {
        uint16_t t;
        for (t = 10; t < 10 + EX_LIST_CAPACITY - 1; t++)
            feed_schedule(&X, t, 0, now + t);
        take_frames();
        assert_int_equal(X.list.n, EX_LIST_CAPACITY);
        feed_schedule(&X, 99, 0, now + 100u);
        feed_schedule(&X, 98, 0, (uint32_t)(now + 32769ul));
        take_frames();
        expect_error(&fr[0], MM_ERR_LIST_FULL, MM_T_SCHEDULE, 99, now);
        expect_error(&fr[1], MM_ERR_HORIZON, MM_T_SCHEDULE, 98, now);
    }
}

static void feed_cancel(struct ex *x, uint16_t tag, uint8_t flags)
{
    uint8_t b[MM_CANCEL_LEN];
    mm_put_u16(b + MM_CANCEL_TAG, tag);
    b[MM_CANCEL_FLAGS] = flags;
    feed_msg(x, MM_T_CANCEL, 0, b, sizeof b);
}

static void expect_cancelled(const struct frame *f, uint16_t tag, uint8_t removed, uint8_t pending)
{
    assert_int_equal(f->type, MM_T_CANCELLED);
    assert_int_equal(f->len, MM_CANCELLED_LEN);
    assert_int_equal(mm_get_u16(f->body + MM_CANCELLED_TAG), tag);
    assert_int_equal(f->body[MM_CANCELLED_REMOVED], removed);
    assert_int_equal(f->body[MM_CANCELLED_PENDING], pending);
}

static void cancel_one_and_all(void **s)
{
    (void)s;
    boot_mixed(0x10, MM_DISPATCH_ISR);
    feed_schedule(&X, 1, 1, 0x14);
    feed_schedule(&X, 2, 2, 0x12);
    feed_schedule(&X, 3, 3, 0x13);
    take_frames();
    feed_cancel(&X, 3, 0);
    feed_cancel(&X, 3, 0);   /* no longer pending */
    feed_cancel(&X, 777, 0); /* never was */
    take_frames();
    assert_int_equal(fr_n, 3);
    expect_cancelled(&fr[0], 3, 1, 2);
    expect_cancelled(&fr[1], 3, 0, 2);
    expect_cancelled(&fr[2], 777, 0, 2);
    assert_int_equal(X.list.e[0].tag, 2); /* order kept */
    assert_int_equal(X.list.e[1].tag, 1);
    /* the tag may be scheduled again */
    feed_schedule(&X, 3, 3, 0x15);
    feed_cancel(&X, 0xABCD, MM_CANCEL_ALL); /* tag ignored, echoed */
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
    expect_cancelled(&fr[1], 0xABCD, 3, 0);
    feed_cancel(&X, 0, MM_CANCEL_ALL);
    take_frames();
    expect_cancelled(&fr[0], 0, 0, 0);
    /* nothing fires afterwards */
    ex_tick(&X, 0x11);
    ex_tick(&X, 0x12);
    ex_tick(&X, 0x13);
    ex_tick(&X, 0x14);
    ex_tick(&X, 0x15);
    assert_int_equal(out_n, 0);
    take_frames();
    assert_int_equal(fr_n, 0);
    /* CANCEL is valid in every mode (it only empties) */
    feed_mode(&X, MM_MODE_IDLE, 0, 0, 0, 0);
    feed_cancel(&X, 5, 0);
    take_frames();
    expect_cancelled(&fr[1], 5, 0, 0);
}

/* Cancelling the event precomputed as the next output un-arms it; the next one is armed instead. */
static void cancel_unarms_the_precomputed_output(void **s)
{
    (void)s;
    boot_mixed(0x10, MM_DISPATCH_ISR);
    feed_schedule(&X, 1, 1, 0x11);
    feed_schedule(&X, 2, 2, 0x11);
    feed_schedule(&X, 3, 5, 0x12);
    assert_int_equal(arm_path, EXB_ARM_ISR);
    assert_int_equal(arm_out, 0x01 | EX_OUT_STROBE);
    take_frames();
    feed_cancel(&X, 1, 0);
    assert_int_equal(arm_path, EXB_ARM_ISR); /* the second event of that tick is armed now */
    assert_int_equal(arm_tc8, 0x11);
    assert_int_equal(arm_out, 0x02 | EX_OUT_STROBE);
    feed_cancel(&X, 2, 0);
    assert_int_equal(arm_path, EXB_ARM_NONE); /* nothing due at the next tick */
    fake_isr(0x11);
    ex_tick(&X, 0x11);
    assert_int_equal(out_n, 0);
    assert_int_equal(arm_path, EXB_ARM_ISR);  /* tag 3, for 0x12 */
    feed_cancel(&X, 0, MM_CANCEL_ALL);
    assert_int_equal(arm_path, EXB_ARM_NONE);
    fake_isr(0x12);
    ex_tick(&X, 0x12);
    assert_int_equal(out_n, 0);
    take_frames();
    assert_int_equal(fr_n, 3);
    expect_cancelled(&fr[0], 1, 1, 2);
    expect_cancelled(&fr[1], 2, 1, 1);
    expect_cancelled(&fr[2], 0, 1, 0);
}

/* The ISR wrote the armed output before the CANCEL was handled: the event has left; it is reported
 * FIRED and the CANCEL removes nothing. */
static void cancel_after_the_isr_fired_reports_fired(void **s)
{
    (void)s;
    boot_mixed(0x10, MM_DISPATCH_ISR);
    feed_schedule(&X, 1, 4, 0x11);
    take_frames();
    fake_isr(0x11); /* the edge: the ISR puts it out; the timecode task has not run yet */
    assert_int_equal(out_n, 1);
    feed_cancel(&X, 1, 0);
    take_frames();
    assert_int_equal(fr_n, 2);
    assert_int_equal(fr[0].type, MM_T_FIRED);
    assert_int_equal(mm_get_u16(fr[0].body + MM_FIRED_TAG), 1);
    expect_cancelled(&fr[1], 1, 0, 0);
    assert_int_equal(X.fired, 1);
    assert_int_equal(arm_path, EXB_ARM_NONE);
}

/* Before protocol version 2 a MODE naming the current mode left the list as it was; after an interrupted run the next
 * run's tag 1 was refused as a duplicate and old events fired into it. */
static void every_mode_empties_the_list(void **s)
{
    (void)s;
    boot_mixed(0x10, MM_DISPATCH_ISR);
    feed_schedule(&X, 1, 1, 0x11); /* armed for the next tick */
    feed_schedule(&X, 2, 2, 0x30);
    assert_int_equal(arm_path, EXB_ARM_ISR);
    feed_mode(&X, MM_MODE_MIXED, MM_DISPATCH_ISR, 0, 0, 0); /* the same mode: a new run */
    take_frames();
    assert_int_equal(fr_n, 3);
    assert_int_equal(fr[2].type, MM_T_STATUS);
    assert_int_equal(fr[2].body[MM_STATUS_PENDING], 0);
    assert_int_equal(X.list.n, 0);
    assert_int_equal(arm_path, EXB_ARM_NONE);
    fake_isr(0x11);
    ex_tick(&X, 0x11);
    assert_int_equal(out_n, 0);
    feed_schedule(&X, 1, 3, 0x13); /* the new run's tag 1 */
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
    assert_int_equal(fr[0].body[MM_ACK_PENDING], 1);
    /* the same with the task dispatch path armed */
    feed_mode(&X, MM_MODE_MIXED, MM_DISPATCH_TASK, 0, 0, 0);
    feed_schedule(&X, 7, 3, 0x12);
    assert_int_equal(arm_path, EXB_ARM_TASK);
    feed_mode(&X, MM_MODE_MIXED, MM_DISPATCH_TASK, 0, 0, 0);
    assert_int_equal(arm_path, EXB_ARM_NONE);
    assert_int_equal(X.list.n, 0);
}

/* ---- protocol version 3: the executor's load ------------------------------------------------------ */

static void expect_status_load(const struct frame *f, uint8_t cpu, uint16_t period, uint16_t exec)
{
    assert_int_equal(f->type, MM_T_STATUS);
    assert_int_equal(f->len, MM_STATUS_LEN);
    assert_int_equal(f->body[MM_STATUS_CPU_LOAD], cpu);
    assert_int_equal(mm_get_u16(f->body + MM_STATUS_PERIODIC_PERIOD_US), period);
    assert_int_equal(mm_get_u16(f->body + MM_STATUS_PERIODIC_EXEC_US), exec);
    /* the counts are the board's, as they are */
    assert_int_equal(mm_get_u32(f->body + MM_STATUS_CPU_LOOPS), load_loops);
    assert_int_equal(mm_get_u32(f->body + MM_STATUS_PERIODIC_RUNS), load_runs);
    assert_int_equal(mm_get_u16(f->body + MM_STATUS_PERIODIC_OVERRUNS), load_overruns);
}

static void mode_sets_the_load_and_status_echoes_it(void **s)
{
    (void)s;
    boot(0x20);
    load_calls = 0;
    tx_n = 0;
    /* after reset: no load, and STATUS says so */
    feed_query(&X, MM_T_STATUS);
    take_frames();
    expect_status_load(&fr[0], 0, 0, 0);
    assert_int_equal(load_calls, 0);
    /* the handout's example (docs/lab.md step 5): CPU load and 10000 us / 2000 us periodic, with mixed mode */
    feed_mode_load(&X, MM_MODE_MIXED, MM_DISPATCH_TASK, 0, 0, 0, 1, 10000, 2000);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].body[MM_STATUS_MODE], MM_MODE_MIXED);
    expect_status_load(&fr[0], 1, 10000, 2000);
    assert_int_equal(load_calls, 1);
    assert_int_equal(load_cpu, 1);
    assert_int_equal(load_period, 10000);
    assert_int_equal(load_exec, 2000);
    /* the boundaries that are accepted: the shortest period with exec = period / 2, the longest
     * period with the longest exec, an odd period (exec rounds down), exec 0, the CPU load alone */
    {
        static const uint16_t ok[][3] = {
            {0, 1000, 500}, {1, 65535, 32767}, {0, 1001, 500}, {1, 1000, 0}, {1, 0, 0},
        };
        size_t i;
        for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
            feed_mode_load(&X, MM_MODE_MIXED, MM_DISPATCH_ISR, 0, 0, 0, (uint8_t)ok[i][0], ok[i][1], ok[i][2]);
            take_frames();
            assert_int_equal(fr_n, 1);
            expect_status_load(&fr[0], (uint8_t)ok[i][0], ok[i][1], ok[i][2]);
            assert_int_equal(load_period, ok[i][1]);
            assert_int_equal(load_exec, ok[i][2]);
        }
    }
    assert_int_equal(load_calls, 6);
    /* refused with BAD_VALUE, and nothing changes: not the load, not the mode, not the list */
    feed_mode_load(&X, MM_MODE_MIXED, MM_DISPATCH_TASK, 0, 0, 0, 1, 10000, 2000);
    feed_schedule(&X, 1, 1, 0x30);
    take_frames();
    assert_int_equal(X.list.n, 1);
    load_calls = 0;
    {
        static const uint16_t bad[][3] = {
            {2, 0, 0},          /* cpu_load is 0 or 1 */
            {0xFF, 10000, 2000},
            {0, 999, 0},        /* a period is 0 or at least 1000 us */
            {0, 1, 0},
            {1, 1000, 501},     /* exec at most half the period */
            {1, 1001, 501},
            {0, 65535, 32768},
            {0, 0, 1},          /* no period: exec 0 */
            {1, 0, 65535},
        };
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
            feed_mode_load(&X, MM_MODE_IDLE, MM_DISPATCH_ISR, 0, 0, 0, (uint8_t)bad[i][0], bad[i][1], bad[i][2]);
        /* a bad version 2 field refuses a good load too */
        feed_mode_load(&X, 3, MM_DISPATCH_ISR, 0, 0, 0, 0, 0, 0);
        take_frames();
        assert_int_equal(fr_n, sizeof bad / sizeof bad[0] + 1);
        for (i = 0; i < fr_n; i++)
            expect_error(&fr[i], MM_ERR_BAD_VALUE, MM_T_MODE, 0, 0x20);
    }
    assert_int_equal(load_calls, 0);
    assert_int_equal(X.list.n, 1);
    feed_query(&X, MM_T_STATUS);
    take_frames();
    assert_int_equal(fr[0].body[MM_STATUS_MODE], MM_MODE_MIXED);
    assert_int_equal(fr[0].body[MM_STATUS_DISPATCH], MM_DISPATCH_TASK);
    expect_status_load(&fr[0], 1, 10000, 2000);
    /* MODE idle with zeros turns the load off (and, as every MODE, empties the list) */
    feed_mode(&X, MM_MODE_IDLE, MM_DISPATCH_ISR, 0, 0, 0);
    take_frames();
    expect_status_load(&fr[0], 0, 0, 0);
    assert_int_equal(load_calls, 1);
    assert_int_equal(load_cpu, 0);
    assert_int_equal(load_period, 0);
    assert_int_equal(load_exec, 0);
    assert_int_equal(X.list.n, 0);
    /* counters wrap like every counter: whatever the board reports */
    load_loops = 0xFFFFFFFFul;
    load_runs = 0;
    load_overruns = 1;
    feed_query(&X, MM_T_STATUS);
    take_frames();
    expect_status_load(&fr[0], 0, 0, 0);
    load_loops = 0x01020304ul;
    load_runs = 0xA0B0C0D0ul;
    load_overruns = 0xBEEF;
}

/* STATUS bytes as the Python implementation packs them: one layout, two sides. */
static void status_bytes_match_python(void **s)
{
    /* Status(2, 1, 0x20, 0, 16, 0, 100, 101, 102, 1, 10000, 2000, 0x01020304, 0xA0B0C0D0, 0xBEEF).body() */
    static const uint8_t want[MM_STATUS_LEN] = {
        0x02, 0x01, 0x20, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x64, 0x00, 0x65, 0x00, 0x66,
        0x00, 0x01, 0x10, 0x27, 0xd0, 0x07, 0x04, 0x03, 0x02, 0x01, 0xd0, 0xc0, 0xb0, 0xa0, 0xef, 0xbe};
    (void)s;
    boot(0x20);
    tx_n = 0;
    feed_mode_load(&X, MM_MODE_MIXED, MM_DISPATCH_TASK, 0, 0, 0, 1, 10000, 2000);
    take_frames();
    assert_int_equal(fr[0].len, sizeof want);
    assert_memory_equal(fr[0].body, want, sizeof want);
}


/* ---- BAUD (version 4) ----------------------------------------------------------------------------- */

static void feed_baud(struct ex *x, uint16_t hundreds)
{
    uint8_t b[MM_BAUD_LEN];
    mm_put_u16(b + MM_BAUD_HUNDREDS, hundreds);
    feed_msg(x, MM_T_BAUD, 0, b, sizeof b);
}

static void baud_switches_then_delimiter_and_hello(void **s)
{
    (void)s;
    boot(0x05);
    tx_n = 0;
    baud_sets = 0;
    feed_baud(&X, 1152);
    assert_int_equal(baud_sets, 1);
    assert_int_equal(baud_div, 17);            /* UBRR0 16: 117647 baud, +2.1 % */
    assert_int_equal(baud_set_at, 0);          /* before the delimiter and the HELLO */
    assert_int_equal(tx[0], 0x00);             /* the lone delimiter, at the new rate */
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_HELLO);
    assert_int_equal(mm_get_u32(fr[0].body + MM_HELLO_BAUD), 115200);
    feed_query(&X, MM_T_HELLO);
    take_frames();
    assert_int_equal(mm_get_u32(fr[0].body + MM_HELLO_BAUD), 115200);
    /* every standard rate from 9600 up to 115200 is made */
    assert_true(exb_baud_check(96) && exb_baud_check(192) && exb_baud_check(384) && exb_baud_check(576));
    /* a reset brings the build-time rate back */
    boot(0x05);
    take_frames();
    assert_int_equal(mm_get_u32(fr[0].body + MM_HELLO_BAUD), 9600);
}

static void baud_not_makeable_is_bad_value(void **s)
{
    uint16_t c[13];
    (void)s;
    boot(0x05);
    tx_n = 0;
    baud_sets = 0;
    feed_baud(&X, 19000);                      /* 1.9 M: UBRR0 0 makes 2 M, +5.3 % */
    feed_baud(&X, 0);
    take_frames();
    assert_int_equal(fr_n, 2);
    expect_error(&fr[0], MM_ERR_BAD_VALUE, MM_T_BAUD, 0, 5);
    expect_error(&fr[1], MM_ERR_BAD_VALUE, MM_T_BAUD, 0, 5);
    assert_int_equal(baud_sets, 0);
    feed_query(&X, MM_T_HELLO);
    take_frames();
    assert_int_equal(mm_get_u32(fr[0].body + MM_HELLO_BAUD), 9600);
    get_counters(c);
    assert_int_equal(c[C_OK], 4);              /* two BAUDs, two QUERYs: valid frames */
    assert_int_equal(c[C_MSG], 0);
}

/* ---- PERIODIC series (protocol version 5) --------------------------------------------------------------- */

static void feed_periodic_flags(struct ex *x, uint16_t tag, uint8_t id, uint32_t tc, uint32_t first,
                                uint32_t period, uint32_t tick, uint16_t count, uint8_t flags)
{
    uint8_t b[MM_PERIODIC_LEN];
    mm_put_u16(b + MM_PERIODIC_TAG, tag);
    b[MM_PERIODIC_EVENT_ID] = id;
    mm_put_u32(b + MM_PERIODIC_TIMECODE, tc);
    mm_put_u32(b + MM_PERIODIC_FIRST, first);
    mm_put_u32(b + MM_PERIODIC_PERIOD, period);
    mm_put_u32(b + MM_PERIODIC_TICK_COUNTS, tick);
    mm_put_u16(b + MM_PERIODIC_COUNT, count);
    b[MM_PERIODIC_FLAGS] = flags;
    feed_msg(x, MM_T_PERIODIC, 0, b, sizeof b);
}

/* A loud series (flags 0): a FIRED for every event, as in version 5. */
static void feed_periodic(struct ex *x, uint16_t tag, uint8_t id, uint32_t tc, uint32_t first, uint32_t period,
                          uint32_t tick, uint16_t count)
{
    feed_periodic_flags(x, tag, id, tc, first, period, tick, count, 0);
}

/* 1 ms on the AVR profiler's 16 MHz tick of 1137778 counts: every moment's tick and fraction, 3000 moments on
 * (42 ticks), against the exact arithmetic of SPEC.md section 7 (m = k * period; tick m div tick_counts). */
static void series_moments_are_exact_fractions_of_the_tick(void **state)
{
    struct ex_series s;
    const uint32_t tick = 1137778ul, period = 16000ul;
    uint32_t k;
    (void)state;

    ex_series_start(&s, 0xFFFE, 6, 100, 5000, period, tick, 3000, 0);
    for (k = 0; k < 3000u; k++) {
        uint64_t m = 5000u + (uint64_t)k * period;
        uint64_t exact = ((m % tick) << 32) / tick;
        assert_int_equal(s.tc, 100u + (uint32_t)(m / tick));
        assert_true(exact - s.frac <= k + 1u); /* the step's truncation, at most one 2^-32 tick an event */
        assert_int_equal(s.tag, (uint16_t)(0xFFFEu + k));
        assert_int_equal(s.id, (6u + k) & 7u);
        assert_int_equal(s.left, 3000u - k);
        ex_series_next(&s);
    }
    assert_int_equal(s.left, 0);
    /* a period longer than a tick: whole ticks plus the fraction */
    ex_series_start(&s, 1, 0, 10, 0, tick + tick / 2u, tick, 3, 0);
    ex_series_next(&s);
    assert_int_equal(s.tc, 11);
    assert_int_equal(ex_series_phase(&s), 0x8000);      /* 568889 / 1137778: half a tick exactly */
    ex_series_next(&s);
    assert_int_equal(s.tc, 13);
}

/* PERIODIC accepted: ACK, the first moment armed on the board in its tick with its phase, each moment the
 * board puts out reported FIRED with its own tag and id, the next armed; the strobe toggles per event. */
static void periodic_fires_each_moment_and_reports_it(void **state)
{
    unsigned k;
    (void)state;

    boot_mixed(0x05, MM_DISPATCH_ISR);
    mom_arms = 0;
    /* tick 6, half a tick in, a quarter of a tick (and a count) apart: moments at counts 568889 and 853334 of
     * tick 6, then 1, 284446 and 568891 of tick 7 */
    feed_periodic(&X, 40, 7, 6, 568889ul, 284445ul, 1137778ul, 5);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_ACK);
    assert_int_equal(mm_get_u16(fr[0].body + MM_ACK_TAG), 40);
    assert_int_equal(fr[0].body[MM_ACK_PENDING], 0);
    assert_true(mom_armed && mom_path == EXB_ARM_ISR && mom_tc8 == 6);     /* the next tick's: armed now */
    assert_in_range(mom_phase, 0x8000 - 1, 0x8000);
    assert_int_equal(mom_out & EX_OUT_ID_MASK, 7);
    for (k = 0; k < 5; k++) {
        uint8_t strobe = mom_out & EX_OUT_STROBE;
        if (k == 2)
            ex_tick(&X, 0x07);                  /* tick 7 began: its moments follow */
        else if (k == 0)
            ex_tick(&X, 0x06);
        mom_done = 1;                           /* the board's timer put the moment out */
        ex_tick(&X, k < 2 ? 0x06 : 0x07);
        take_frames();
        assert_int_equal(fr_n, 1);
        assert_int_equal(fr[0].type, MM_T_FIRED);
        assert_int_equal(mm_get_u16(fr[0].body + MM_FIRED_TAG), 40 + k);
        assert_int_equal(fr[0].body[MM_FIRED_EVENT_ID], (7 + k) & 7);
        assert_int_equal(mm_get_u32(fr[0].body + MM_FIRED_TIMECODE), k < 2 ? 6 : 7);   /* the moment's tick */
        if (k < 4) {
            assert_true(mom_armed);
            assert_int_equal(mom_out & EX_OUT_STROBE, strobe ^ EX_OUT_STROBE);
            assert_int_equal(mom_tc8, k + 1 < 2 ? 6 : 7);
        }
    }
    assert_false(mom_armed);                    /* the series is over */
    assert_int_equal(X.series.left, 0);
    assert_int_equal(X.fired, 5);
}

/* A moment two ticks ahead is not armed until its tick is the next one (the 8-bit port would match 256 ticks
 * early); one whose tick is over (armed late) is armed at the current tick's start: out at once. */
static void periodic_arms_only_the_current_or_next_tick(void **state)
{
    (void)state;
    boot_mixed(0x05, MM_DISPATCH_TASK);
    feed_periodic(&X, 1, 0, 8, 100, 1137778ul, 1137778ul, 2);     /* tick 8: three ahead */
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
    assert_false(mom_armed);
    ex_tick(&X, 0x06);
    assert_false(mom_armed);
    ex_tick(&X, 0x07);
    assert_true(mom_armed && mom_tc8 == 8 && mom_path == EXB_ARM_TASK);
    /* ticks 8 and 9 pass without the board putting it out (a stalled timer, say): armed at tick 9's start */
    ex_tick(&X, 0x08);
    ex_tick(&X, 0x09);
    assert_true(mom_armed && mom_tc8 == 9);
    ex_tick(&X, 0x0A);
    assert_true(mom_armed && mom_tc8 == 0x0A && mom_phase == 0);
}

static void periodic_refusals_in_the_specs_order(void **state)
{
    (void)state;
    boot(0x05);
    take_frames();                                                  /* its HELLO */
    feed_periodic(&X, 2, 9, 2, 0, 1, 1, 1);                         /* idle: BAD_MODE before BAD_VALUE */
    take_frames();
    expect_error(&fr[0], MM_ERR_BAD_MODE, MM_T_PERIODIC, 2, 5);
    boot_mixed(0x05, MM_DISPATCH_ISR);
    feed_periodic(&X, 3, 8, 9, 0, 10, 100, 1);                      /* id 8 */
    feed_periodic(&X, 4, 0, 9, 0, 10, 100, 0);                      /* count 0 */
    feed_periodic(&X, 5, 0, 9, 0, 0, 100, 1);                       /* period 0 */
    feed_periodic(&X, 6, 0, 9, 0, 10, 0, 1);                        /* tick 0 */
    feed_periodic(&X, 7, 0, 2, 100, 10, 100, 1);                    /* first not below the tick, and past due */
    feed_periodic(&X, 8, 0, 5, 0, 10, 100, 1);                      /* the current tick: past due */
    feed_periodic(&X, 9, 0, 5u + 32769u, 0, 10, 100, 1);            /* beyond the horizon */
    take_frames();
    assert_int_equal(fr_n, 7);
    expect_error(&fr[0], MM_ERR_BAD_VALUE, MM_T_PERIODIC, 3, 5);
    expect_error(&fr[1], MM_ERR_BAD_VALUE, MM_T_PERIODIC, 4, 5);
    expect_error(&fr[2], MM_ERR_BAD_VALUE, MM_T_PERIODIC, 5, 5);
    expect_error(&fr[3], MM_ERR_BAD_VALUE, MM_T_PERIODIC, 6, 5);
    expect_error(&fr[4], MM_ERR_BAD_VALUE, MM_T_PERIODIC, 7, 5);
    expect_error(&fr[5], MM_ERR_PAST_DUE, MM_T_PERIODIC, 8, 5);
    expect_error(&fr[6], MM_ERR_HORIZON, MM_T_PERIODIC, 9, 5);
    /* a series and listed events do not mix */
    feed_schedule(&X, 10, 1, 7);
    feed_periodic(&X, 11, 0, 7, 0, 10, 100, 1);
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
    expect_error(&fr[1], MM_ERR_LIST_FULL, MM_T_PERIODIC, 11, 5);
    boot_mixed(0x05, MM_DISPATCH_ISR);
    feed_periodic(&X, 12, 0, 7, 0, 10, 100, 3);
    feed_periodic(&X, 13, 0, 8, 0, 10, 100, 3);                     /* queued behind it */
    feed_periodic(&X, 14, 0, 9, 0, 10, 100, 3);                     /* a third: refused */
    feed_schedule(&X, 15, 1, 7);
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
    assert_int_equal(fr[0].body[MM_ACK_PENDING], 0);
    assert_int_equal(fr[1].type, MM_T_ACK);
    assert_int_equal(fr[1].body[MM_ACK_PENDING], 1);
    expect_error(&fr[2], MM_ERR_LIST_FULL, MM_T_PERIODIC, 14, 5);
    expect_error(&fr[3], MM_ERR_LIST_FULL, MM_T_SCHEDULE, 15, 5);
}

/* A series queued behind a running one takes over when the running one has fired its last event: its
 * moments, tags and ids its own, with no gap. */
static void a_queued_series_follows_the_running_one(void **state)
{
    unsigned k;
    (void)state;
    boot_mixed(0x05, MM_DISPATCH_ISR);
    feed_periodic(&X, 100, 0, 6, 0, 284445ul, 1137778ul, 2);       /* tick 6 at 0 and a quarter */
    feed_periodic(&X, 200, 5, 6, 568890ul, 284445ul, 1137778ul, 2); /* tick 6 at a half and three quarters */
    take_frames();
    assert_int_equal(fr_n, 2);
    ex_tick(&X, 0x06);
    for (k = 0; k < 4; k++) {
        mom_done = 1;
        ex_tick(&X, 0x06);
        take_frames();
        assert_int_equal(fr_n, 1);
        assert_int_equal(mm_get_u16(fr[0].body + MM_FIRED_TAG), k < 2 ? 100 + k : 200 + (k - 2));
        assert_int_equal(fr[0].body[MM_FIRED_EVENT_ID], k < 2 ? k : 5 + (k - 2));
        if (k == 1)
            assert_in_range(mom_phase, 0x8000 - 1, 0x8000);        /* the queued one's first moment */
    }
    assert_false(mom_armed);
    assert_int_equal(X.series.left + X.next.left, 0);
}

/* CANCEL all and every MODE end a series: CANCELLED counts the events it had left; a moment already put out
 * when the end came is reported FIRED first. */
static void cancel_and_mode_end_a_series(void **state)
{
    (void)state;
    boot_mixed(0x05, MM_DISPATCH_ISR);
    feed_periodic(&X, 20, 0, 6, 0, 100, 1137778ul, 300);
    take_frames();
    {
        uint8_t b[MM_CANCEL_LEN] = {0, 0, MM_CANCEL_ALL};
        mom_done = 1;                                   /* the first moment left just before the CANCEL */
        feed_msg(&X, MM_T_CANCEL, 0, b, sizeof b);
    }
    take_frames();
    assert_int_equal(fr_n, 2);
    assert_int_equal(fr[0].type, MM_T_FIRED);
    assert_int_equal(mm_get_u16(fr[0].body + MM_FIRED_TAG), 20);
    assert_int_equal(fr[1].type, MM_T_CANCELLED);
    assert_int_equal(fr[1].body[MM_CANCELLED_REMOVED], 255);     /* 299 left: the field's most */
    assert_false(mom_armed);
    feed_periodic(&X, 30, 0, 6, 0, 100, 1137778ul, 4);
    feed_mode(&X, MM_MODE_MIXED, MM_DISPATCH_ISR, 0, 0, 0);
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
    assert_int_equal(fr[1].type, MM_T_STATUS);
    assert_int_equal(X.series.left, 0);
    assert_false(mom_armed);
}

/* A quiet series against the timed board model (tb_on): the moments of `period` profiler counts from tick 7 on,
 * each moment's compare placed at its tick's edge or when armed, as board.c does; the timecode task runs the
 * core `wake` counts after each edge (and 2 after each compare, the ISR's wake-up). Every moment must go out
 * once, in order, at its time: no earlier than its exact place in the tick, at most 3 counts (12 us) later. */
static void timed_series(uint32_t period, uint16_t n, uint32_t wake)
{
    const uint32_t tick = 1137778ul;
    uint32_t task_at = 0;
    unsigned k;

    boot_mixed(0x06, MM_DISPATCH_ISR);
    tb_on = 1;
    tb_now = tb_edge = 0;
    tb_port = 0x06;
    tb_wait = tb_cmp_on = 0;
    tb_outs = tb_task_outs = 0;
    feed_periodic_flags(&X, 1, 0, 7, 0, period, tick, n, MM_PERIODIC_FLAG_QUIET);
    while (X.series.left != 0 && tb_now < 400u * TB_LEN) {
        uint32_t t = tb_edge + TB_LEN;
        uint8_t what = 0;
        if (tb_cmp_on && tb_cmp < t) {
            t = tb_cmp;
            what = 1;
        }
        if (task_at != 0 && task_at < t) {
            t = task_at;
            what = 2;
        }
        tb_now = t;
        if (what == 1) {                        /* compare C: out, wake the task */
            tb_out(0);
            if (task_at == 0)
                task_at = t + 2u;
        } else if (what == 2) {                 /* the timecode task */
            task_at = 0;
            ex_tick(&X, tb_port);
        } else {                                /* an edge: a moment waiting for this tick gets its compare */
            tb_edge = t;
            tb_port++;
            if (tb_wait && tb_port == mom_tc8)
                tb_compare(0);
            if (task_at == 0)
                task_at = t + wake;
        }
    }
    if (X.series.left != 0 || tb_outs != n)
        print_message("period %u, task %u counts after the edge: %u of %u moments out, %u left\n", (unsigned)period,
                      (unsigned)wake, tb_outs, (unsigned)n, (unsigned)X.series.left);
    assert_int_equal(X.series.left, 0);
    assert_int_equal(tb_outs, n);
    for (k = 0; k < n; k++) {
        uint64_t m = (uint64_t)k * period;
        double exact = (double)(1u + m / tick) * TB_LEN + (double)(m % tick) * TB_LEN / (double)tick;
        if (tb_out_at[k] < exact || tb_out_at[k] > exact + 3.0)
            print_message("period %u, task %u counts after the edge: moment %u (tick %u) out at %u, due %.2f\n",
                          (unsigned)period, (unsigned)wake, k, (unsigned)(7u + m / tick), (unsigned)tb_out_at[k], exact);
        assert_true(tb_out_at[k] >= exact);
        assert_true(tb_out_at[k] <= exact + 3.0);
    }
    tb_on = 0;
}

/* The bench's rates (lockstep, 2026-11-27): at 0.667 ms (10672 counts) 4762 of 6000 moments missed. The timecode
 * task ran the core 1100-1300 cycles (~18 counts) after an edge, and its new-tick series_arm re-armed the moment the
 * edge had just placed; a first moment of a tick due then (tick 21 at 0.667 ms: compare 17 counts after the edge)
 * was written at once by the task and left unreported until the next wake, the next tick's edge, where the core
 * found its moments past and put out 8 a tick, late, for good. Every rate, with the task anywhere from 2 to 30
 * counts after the edge. */
static void series_at_the_bench_rates_fires_every_moment_on_time(void **state)
{
    static const uint32_t periods[] = {10672, 16000, 12800, 9600, 8000, 6400, 5600, 5333, 4800, 4000, 3200};
    unsigned i;
    uint32_t wake;
    (void)state;

    for (i = 0; i < sizeof periods / sizeof periods[0]; i++)
        for (wake = 2; wake <= 30; wake++)
            timed_series(periods[i], 6000, wake);
}

/* ---- quiet series (protocol version 6) ------------------------------------------------------------------ */

/* STATUS.fired, read with a QUERY (earlier frames are the caller's business). */
static uint32_t status_fired(void)
{
    tx_n = 0;
    feed_query(&X, MM_T_STATUS);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_STATUS);
    return mm_get_u32(fr[0].body + MM_STATUS_FIRED);
}

/* A quiet series of 1000 events at 1 kHz (16000 counts of the 16 MHz profiler's 1137778-count tick): every
 * moment armed and put out, the strobe toggled each time, STATUS.fired 1000, but one FIRED on the line, the
 * last event's (tag + 999, id (3 + 999) mod 8, the tick it was armed in). */
static void quiet_series_reports_its_last_event_only(void **state)
{
    const uint16_t n = 1000;
    uint8_t tc8 = 0x06;
    unsigned k;
    (void)state;
    boot_mixed(0x05, MM_DISPATCH_ISR);
    feed_periodic_flags(&X, 500, 3, 6, 0, 16000ul, 1137778ul, n, MM_PERIODIC_FLAG_QUIET);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_ACK);
    assert_int_equal(fr[0].body[MM_ACK_PENDING], 0);
    ex_tick(&X, tc8);
    for (k = 0; k < n; k++) {
        uint8_t strobe = mom_out & EX_OUT_STROBE;
        assert_true(mom_armed);
        while (mom_tc8 != tc8)                  /* the moment is in a later tick: let the ticks pass */
            ex_tick(&X, ++tc8);
        assert_int_equal(mom_out & EX_OUT_ID_MASK, (3u + k) & 7u);
        mom_done = 1;                           /* the board's timer put the moment out */
        ex_tick(&X, tc8);
        if (k + 1u < n) {
            assert_int_equal(mom_out & EX_OUT_STROBE, strobe ^ EX_OUT_STROBE);
            assert_int_equal(tx_n, 0);          /* nothing sent for it */
        }
    }
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_FIRED);
    assert_int_equal(mm_get_u16(fr[0].body + MM_FIRED_TAG), 500 + n - 1);
    assert_int_equal(fr[0].body[MM_FIRED_EVENT_ID], (3u + n - 1u) & 7u);
    assert_int_equal(mm_get_u32(fr[0].body + MM_FIRED_TIMECODE), tc8);
    assert_int_equal(mm_get_u32(fr[0].body + MM_FIRED_TIMECODE), 6u + (uint32_t)((n - 1u) * 16000ull / 1137778ull));
    assert_false(mom_armed);
    assert_int_equal(X.series.left, 0);
    assert_int_equal(status_fired(), n);
}

/* Each series keeps its own flag: a loud series with a quiet one queued behind it reports every event of its
 * own, then the quiet one's last only; and a quiet one with a loud one queued behind it the other way round. */
static void quiet_and_loud_series_queued_keep_their_own_flag(void **state)
{
    static const uint16_t loud_then_quiet[] = {100, 101, 203};
    static const uint16_t quiet_then_loud[] = {103, 200, 201};
    const uint16_t *want;
    unsigned k, pass, got;
    uint8_t tc8;
    (void)state;
    for (pass = 0; pass < 2; pass++) {
        boot_mixed(0x05, MM_DISPATCH_ISR);
        /* tick 6 at 0 and a quarter (2 events, or 4), then from a half on, a quarter apart */
        if (pass == 0) {
            feed_periodic_flags(&X, 100, 0, 6, 0, 284445ul, 1137778ul, 2, 0);
            feed_periodic_flags(&X, 200, 5, 6, 568890ul, 284445ul, 1137778ul, 4, MM_PERIODIC_FLAG_QUIET);
            want = loud_then_quiet;
        } else {
            feed_periodic_flags(&X, 100, 0, 6, 0, 284445ul, 1137778ul, 4, MM_PERIODIC_FLAG_QUIET);
            feed_periodic_flags(&X, 200, 5, 8, 0, 284445ul, 1137778ul, 2, 0);
            want = quiet_then_loud;
        }
        take_frames();
        assert_int_equal(fr_n, 2);
        assert_int_equal(fr[1].type, MM_T_ACK);
        assert_int_equal(fr[1].body[MM_ACK_PENDING], 1);   /* queued behind the running one */
        assert_int_equal(X.series.quiet, pass == 1);
        assert_int_equal(X.next.quiet, pass == 0);
        tc8 = 0x06;
        ex_tick(&X, tc8);
        got = 0;
        for (k = 0; k < 6; k++) {
            while (!mom_armed || mom_tc8 != tc8) {  /* a moment two ticks ahead is armed when its tick is next */
                assert_true(tc8 < 0x10);
                ex_tick(&X, ++tc8);
            }
            mom_done = 1;
            ex_tick(&X, tc8);
            take_frames();
            if (fr_n != 0) {
                assert_int_equal(fr_n, 1);
                assert_int_equal(fr[0].type, MM_T_FIRED);
                assert_true(got < 3);
                assert_int_equal(mm_get_u16(fr[0].body + MM_FIRED_TAG), want[got]);
                got++;
            }
        }
        assert_int_equal(got, 3);
        assert_false(mom_armed);
        assert_int_equal(X.series.left + X.next.left, 0);
        assert_int_equal(status_fired(), 6);
    }
}

/* A quiet series ended by CANCEL reports as a loud one: CANCELLED with the events it had left. A moment put
 * out just before the CANCEL is counted in STATUS.fired, with no FIRED (it was not the last). */
static void cancel_ends_a_quiet_series_with_cancelled(void **state)
{
    uint8_t b[MM_CANCEL_LEN] = {0, 0, MM_CANCEL_ALL};
    (void)state;
    boot_mixed(0x05, MM_DISPATCH_ISR);
    feed_periodic_flags(&X, 20, 0, 6, 0, 100, 1137778ul, 10, MM_PERIODIC_FLAG_QUIET);
    take_frames();
    ex_tick(&X, 0x06);
    mom_done = 1;
    ex_tick(&X, 0x06);                                  /* event 20: out, not reported */
    mom_done = 1;                                       /* event 21 left just before the CANCEL */
    feed_msg(&X, MM_T_CANCEL, 0, b, sizeof b);
    take_frames();
    assert_int_equal(fr_n, 1);
    assert_int_equal(fr[0].type, MM_T_CANCELLED);
    assert_int_equal(fr[0].body[MM_CANCELLED_REMOVED], 8);
    assert_false(mom_armed);
    assert_int_equal(status_fired(), 2);
}

/* PERIODIC's reserved flag bits (1..7) are refused with BAD_VALUE, after BAD_MODE and before PAST_DUE (SPEC.md
 * order), and change nothing: no series started or queued, nothing armed, the running series untouched. */
static void periodic_reserved_flag_bits_are_bad_value(void **state)
{
    unsigned bit;
    (void)state;
    boot(0x05);
    take_frames();
    feed_periodic_flags(&X, 1, 0, 9, 0, 10, 100, 1, 0x02);
    take_frames();
    expect_error(&fr[0], MM_ERR_BAD_MODE, MM_T_PERIODIC, 1, 5); /* not in mixed mode: BAD_MODE first */
    boot_mixed(0x05, MM_DISPATCH_ISR);
    mom_arms = 0;
    for (bit = 1; bit < 8; bit++)
        feed_periodic_flags(&X, (uint16_t)(10 + bit), 0, 9, 0, 10, 100, 1,
                            (uint8_t)(MM_PERIODIC_FLAG_QUIET | (1u << bit)));
    feed_periodic_flags(&X, 18, 0, 5, 0, 10, 100, 1, 0xFE);    /* past due too: BAD_VALUE first */
    take_frames();
    assert_int_equal(fr_n, 8);
    for (bit = 1; bit < 8; bit++)
        expect_error(&fr[bit - 1], MM_ERR_BAD_VALUE, MM_T_PERIODIC, (uint16_t)(10 + bit), 5);
    expect_error(&fr[7], MM_ERR_BAD_VALUE, MM_T_PERIODIC, 18, 5);
    assert_int_equal(X.series.left + X.next.left, 0);
    assert_int_equal(mom_arms, 0);
    assert_false(mom_armed);
    /* with a series running: refused, the series and its queue slot as they were */
    feed_periodic_flags(&X, 30, 2, 6, 0, 100, 1137778ul, 5, MM_PERIODIC_FLAG_QUIET);
    take_frames();
    assert_int_equal(fr[0].type, MM_T_ACK);
    mom_arms = 0;
    feed_periodic_flags(&X, 40, 0, 7, 0, 100, 1137778ul, 5, 0x80);
    take_frames();
    assert_int_equal(fr_n, 1);
    expect_error(&fr[0], MM_ERR_BAD_VALUE, MM_T_PERIODIC, 40, 5);
    assert_int_equal(X.series.left, 5);
    assert_int_equal(X.series.tag, 30);
    assert_int_equal(X.series.quiet, 1);
    assert_int_equal(X.next.left, 0);
    assert_int_equal(mom_arms, 0);
    assert_true(mom_armed && mom_tc8 == 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tc_steps_and_8bit_wrap),
        cmocka_unit_test(tc_32bit_wrap),
        cmocka_unit_test(tc_glitch_noise_is_counted_not_applied),
        cmocka_unit_test(tc_glitch_confirmed_resyncs),
        cmocka_unit_test(tc_read_stable_waits_for_two_equal_reads),
        cmocka_unit_test(list_orders_by_timecode_fifo_on_ties),
        cmocka_unit_test(list_refuses_past_due_duplicate_full),
        cmocka_unit_test(list_orders_across_32bit_wrap),
        cmocka_unit_test(boot_sends_flush_then_hello_seq0),
        cmocka_unit_test(mode_answers_status),
        cmocka_unit_test(schedule_outside_mixed_is_bad_mode_and_bad_id_is_bad_value),
        cmocka_unit_test(schedule_ack_isr_dispatch_fired),
        cmocka_unit_test(task_dispatch_and_strobe_toggles),
        cmocka_unit_test(past_due_duplicate_full_refused_and_counted),
        cmocka_unit_test(garbage_and_corrupt_frames_counted_and_dropped),
        cmocka_unit_test(tx_full_drops_whole_frames_and_counts),
        cmocka_unit_test(glitch_counted_in_counters_and_no_false_fire),
        cmocka_unit_test(verification_mode_generates_sequential_and_random),
        cmocka_unit_test(leaving_a_mode_clears_the_list),
        cmocka_unit_test(query_unknown_what_is_bad_value),
        cmocka_unit_test(counters_carry_rx_lost_from_the_board),
        cmocka_unit_test(looped_back_line_settles),
        cmocka_unit_test(non_requests_are_dropped_silently),
        cmocka_unit_test(schedule_horizon_boundaries),
        cmocka_unit_test(cancel_one_and_all),
        cmocka_unit_test(cancel_unarms_the_precomputed_output),
        cmocka_unit_test(cancel_after_the_isr_fired_reports_fired),
        cmocka_unit_test(every_mode_empties_the_list),
        cmocka_unit_test(mode_sets_the_load_and_status_echoes_it),
        cmocka_unit_test(status_bytes_match_python),
        cmocka_unit_test(baud_switches_then_delimiter_and_hello),
        cmocka_unit_test(baud_not_makeable_is_bad_value),
        cmocka_unit_test(series_moments_are_exact_fractions_of_the_tick),
        cmocka_unit_test(periodic_fires_each_moment_and_reports_it),
        cmocka_unit_test(periodic_arms_only_the_current_or_next_tick),
        cmocka_unit_test(series_at_the_bench_rates_fires_every_moment_on_time),
        cmocka_unit_test(periodic_refusals_in_the_specs_order),
        cmocka_unit_test(cancel_and_mode_end_a_series),
        cmocka_unit_test(a_queued_series_follows_the_running_one),
        cmocka_unit_test(quiet_series_reports_its_last_event_only),
        cmocka_unit_test(quiet_and_loud_series_queued_keep_their_own_flag),
        cmocka_unit_test(cancel_ends_a_quiet_series_with_cancelled),
        cmocka_unit_test(periodic_reserved_flag_bits_are_bad_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

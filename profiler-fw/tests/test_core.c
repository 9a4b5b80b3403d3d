/* cmocka unit tests of the profiler core on the host board. Frames are decoded with the protocol's
 * own C decoder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "pf_core.h"
#include "board_host.h"

static struct mm_dec rx;
static uint8_t pay[64][MM_DEC_CAPACITY > 40 ? MM_DEC_CAPACITY : 40];
static uint8_t paylen[64]; /* payload lengths (header + body) */

/* Runs the transmitter and the foreground until both are idle; returns frames decoded (payloads
 * into pay[]). The transmitter first: pf_tick may have started a TIMECODE encoded ahead. */
static int drain(void)
{
    int n = 0;
    int16_t b;
    do {
        while ((b = pf_tx_next()) >= 0) {
            uint8_t r = mm_dec_push(&rx, (uint8_t)b);
            if (r == MM_DEC_FRAME) {
                memcpy(pay[n], rx.buf, mm_dec_payload_len(&rx));
                paylen[n] = (uint8_t)mm_dec_payload_len(&rx);
                n++;
            }
            assert_true(r == MM_DEC_BUSY || r == MM_DEC_FRAME);
        }
    } while (pf_service());
    return n;
}

static int setup(void **st)
{
    (void)st;
    mm_dec_init(&rx);
    host_now = 0;
    host_prev_len = PF_TICK_COUNTS;
    host_baud_reset();
    pf_init();
    return 0;
}

static void feed(const uint8_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pf_rx_byte(w[i]);
}

/* Encodes a frame with the protocol encoder and feeds it to the core. */
static void send(uint8_t type, const uint8_t *body, uint8_t len)
{
    struct mm_enc e;
    int16_t b;
    mm_enc_start(&e, type, 0, body, len);
    while ((b = mm_enc_next(&e)) >= 0) {
        uint8_t c = (uint8_t)b;
        feed(&c, 1);
    }
}

static void test_hello_first(void **st)
{
    (void)st;
    assert_int_equal(pf_tx_next(), 0); /* lone delimiter before anything */
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_HELLO);
    assert_int_equal(pay[0][1], 0);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_TICK_COUNTS), PF_TICK_COUNTS);
}

/* Protocol version 2: the HELLO body is 22 bytes, reset_cause (offset 21) is what the board's hook
 * says (the AVR: MCUSR as it was at reset), and the fields before it are unchanged. */
static void test_hello_v2_layout_and_reset_cause(void **st)
{
    (void)st;
    host_reset_cause = MM_RESET_WATCHDOG | MM_RESET_EXTERNAL;
    (void)pf_tx_next();
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_HELLO);
    assert_int_equal(paylen[0], MM_HDR_LEN + MM_HELLO_LEN);
    assert_int_equal(MM_HELLO_LEN, 22);
    assert_int_equal(pay[0][2 + MM_HELLO_PROTO_VERSION], MM_PROTO_VERSION);
    assert_int_equal(pay[0][2 + MM_HELLO_NODE_KIND], MM_NODE_PROFILER);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_HELLO_FW_VERSION), PF_FW_VERSION);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_CPU_HZ), PF_CPU_HZ);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_TIMER_HZ), PF_TIMER_HZ);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_BAUD), PF_BAUD);
    assert_int_equal(pay[0][2 + MM_HELLO_FLAGS], PF_HELLO_FLAGS);
    assert_int_equal(pay[0][2 + MM_HELLO_RESET_CAUSE], MM_RESET_WATCHDOG | MM_RESET_EXTERNAL);
    /* on QUERY(HELLO) again, with the same cause: it names the last reset, not the query */
    {
        uint8_t q = MM_T_HELLO;
        send(MM_T_QUERY, &q, 1);
    }
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_HELLO);
    assert_int_equal(pay[0][2 + MM_HELLO_RESET_CAUSE], MM_RESET_WATCHDOG | MM_RESET_EXTERNAL);
    host_reset_cause = 0;
}

static void test_timecode_priority_and_missed(void **st)
{
    (void)st;
    pf_tick();
    assert_int_equal(pf_tc_next, 2);
    pf_tick(); /* the first TIMECODE was never queued */
    assert_int_equal(pf_counter(PF_C_TICKS_MISSED), 1);
    (void)pf_tx_next();
    assert_int_equal(drain(), 2);
    assert_int_equal(pay[0][0], MM_T_TIMECODE); /* before HELLO */
    assert_int_equal(mm_get_u32(pay[0] + 2), 2);
    assert_int_equal(pay[1][0], MM_T_HELLO);
}

static void test_overflow_flag_and_counter(void **st)
{
    (void)st;
    struct pf_stamp s = {0, 0, 100};
    (void)pf_tx_next();
    drain();
    for (int i = 0; i < PF_RING_LEN + 3; i++)
        pf_event((uint8_t)i, 1, &s);
    assert_int_equal(pf_counter(PF_C_OVERFLOWS), 3);
    assert_int_equal(pf_ring_count(), PF_RING_LEN);
    assert_int_equal(drain(), PF_RING_LEN);
    pf_event(5, 0, &s);
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_RESULT);
    assert_int_equal(pay[0][2 + MM_RESULT_FLAGS], MM_RESULT_FLAG_LOST_BEFORE);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_RESULT_TAG), PF_RING_LEN); /* reported-edge count */
    assert_int_equal(host_leds, 1u << 5);
}

/* An edge the board could not pair with an id (the strobe moved again before its capture was read:
 * two events closer than the capture separates, or a glitch) is dropped: counted in spurious_edges, and
 * the next stored result says results were lost before it, so the scheduler ends the events it cannot
 * account for as lost, a fault of the rig, never as missed by the executor. */
static void test_spurious_edge_flags_next_result(void **st)
{
    (void)st;
    struct pf_stamp s = {0, 0, 100};
    (void)pf_tx_next();
    drain();
    pf_event(1, 1, &s);
    pf_spurious();
    pf_event(3, 1, &s);
    assert_int_equal(drain(), 2);
    assert_int_equal(pay[0][2 + MM_RESULT_FLAGS], MM_RESULT_FLAG_STROBE);
    assert_int_equal(pay[1][2 + MM_RESULT_FLAGS], MM_RESULT_FLAG_LOST_BEFORE | MM_RESULT_FLAG_STROBE);
    assert_int_equal(pay[1][2 + MM_RESULT_EVENT_ID], 3);
    assert_int_equal(pf_counter(PF_C_SPURIOUS), 1);
    assert_int_equal(pf_counter(PF_C_OVERFLOWS), 0);
}

static void test_fire_timestamp_and_tag(void **st)
{
    (void)st;
    uint8_t fire[3] = {6, 0x34, 0x12};
    (void)pf_tx_next();
    drain();
    pf_tick();                 /* timecode 1 */
    drain();
    host_now = 20000;          /* first byte's RX interrupt 20000 counts into tick 1 */
    host_prev_len = PF_TICK_COUNTS;
    send(MM_T_FIRE, fire, 3);
    assert_int_equal(pf_counter(PF_C_FIRE_FRAMES), 1);
    assert_int_equal(pf_counter(PF_C_RX_OK), 1);
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][2 + MM_RESULT_EVENT_ID], 6);
    assert_int_equal(pay[0][2 + MM_RESULT_FLAGS], MM_RESULT_FLAG_FIRE);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_RESULT_TAG), 0x1234);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_RESULT_TIMECODE), 1);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_RESULT_COUNTS), 20000 - PF_CHAR_COUNTS);
}

static void test_fire_backdated_into_previous_tick(void **st)
{
    (void)st;
    uint8_t fire[3] = {1, 1, 0};
    (void)pf_tx_next();
    drain();
    pf_tick();
    pf_tick();                 /* timecode 2 */
    drain();
    host_now = 100;            /* 100 counts into tick 2: the start bit began in tick 1 */
    send(MM_T_FIRE, fire, 3);
    drain();
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_RESULT_TIMECODE), 1);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_RESULT_COUNTS), PF_TICK_COUNTS + 100 - PF_CHAR_COUNTS);
}

/* One ERROR frame in pay[i]: its fields. */
static void assert_error(int i, uint8_t code, uint8_t ref_type, uint16_t ref_tag, uint32_t tc)
{
    assert_int_equal(pay[i][0], MM_T_ERROR);
    assert_int_equal(paylen[i], MM_HDR_LEN + MM_ERROR_LEN);
    assert_int_equal(pay[i][2 + MM_ERROR_CODE], code);
    assert_int_equal(pay[i][2 + MM_ERROR_REF_TYPE], ref_type);
    assert_int_equal(mm_get_u16(pay[i] + 2 + MM_ERROR_REF_TAG), ref_tag);
    assert_int_equal(mm_get_u32(pay[i] + 2 + MM_ERROR_TIMECODE), tc);
}

static void test_garbage_counted(void **st)
{
    (void)st;
    static const uint8_t g[] = {0x05, 0x11, 0x22, 0x00, 0x02, 0x41, 0x00};
    uint8_t q = MM_T_COUNTERS;
    uint8_t bad_id[3] = {9, 0, 0};
    feed(g, sizeof g);
    for (int i = 0; i < 50; i++) {
        uint8_t c = 0x41;
        feed(&c, 1);
    }
    feed((const uint8_t *)"\0", 1);
    send(MM_T_FIRE, bad_id, 3);
    send(MM_T_TIMECODE, bad_id, 3); /* wrong body length */
    assert_int_equal(pf_counter(PF_C_RX_BAD_COBS), 1);
    assert_int_equal(pf_counter(PF_C_RX_TOO_SHORT), 1);
    assert_int_equal(pf_counter(PF_C_RX_TOO_LONG), 1);
    /* version 2: the FIRE with event id 9 is a valid frame (rx_ok) answered with ERROR BAD_VALUE; the
     * TIMECODE of the wrong length found that ERROR still waiting: not answered (tx_dropped) */
    assert_int_equal(pf_counter(PF_C_RX_BAD_MESSAGE), 1);
    assert_int_equal(pf_counter(PF_C_TX_DROPPED), 1);
    send(MM_T_QUERY, &q, 1);
    (void)pf_tx_next();
    assert_int_equal(drain(), 3); /* HELLO, COUNTERS, ERROR */
    assert_int_equal(pay[1][0], MM_T_COUNTERS);
    assert_int_equal(mm_get_u16(pay[1] + 2 + MM_COUNTERS_RX_BAD_MESSAGE), 1);
    assert_int_equal(mm_get_u16(pay[1] + 2 + MM_COUNTERS_RX_OK), 2);
    assert_int_equal(mm_get_u16(pay[1] + 2 + MM_COUNTERS_TX_DROPPED), 1);
    assert_error(2, MM_ERR_BAD_VALUE, MM_T_FIRE, 0, 0);
}

/* Protocol version 2: COUNTERS is 26 bytes, rx_ring_overflow at 22 (the AVR has no receive
 * ring: always 0) and rx_hw_overrun at 24 (the board reports each USART data overrun through
 * pf_rx_overrun), both after node_d. */
static void test_counters_v2_layout_and_overrun(void **st)
{
    (void)st;
    uint8_t q = MM_T_COUNTERS;
    (void)pf_tx_next();
    drain();
    pf_rx_overrun();
    pf_rx_overrun();
    pf_rx_overrun();
    pf_spurious();
    send(MM_T_QUERY, &q, 1);
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_COUNTERS);
    assert_int_equal(paylen[0], MM_HDR_LEN + MM_COUNTERS_LEN);
    assert_int_equal(MM_COUNTERS_LEN, 26);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_COUNTERS_RX_OK), 1);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_COUNTERS_NODE_B), 1);   /* spurious_edges */
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_COUNTERS_NODE_D), 0);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_COUNTERS_RX_RING_OVERFLOW), 0);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_COUNTERS_RX_HW_OVERRUN), 3);
    assert_int_equal(pf_counter(PF_C_RX_HW_OVERRUN), 3);
}

/* SPEC.md "Requests and answers" (version 2): the profiler's requests are FIRE and QUERY; a
 * frame of an unknown type or a wrong length gets one ERROR; a request it cannot serve gets one ERROR
 * (BAD_VALUE); every other known type is dropped silently (counted in rx_ok only). Version 1 sent no
 * ERROR at all: a bad frame was only counted. */
static void test_error_answers_requests_only(void **st)
{
    (void)st;
    static uint8_t zeros[MM_MAX_BODY];
    static const uint8_t others[] = {MM_T_HELLO, MM_T_ERROR, MM_T_COUNTERS, MM_T_TIMECODE, MM_T_RESULT,
                                     MM_T_SCHEDULE, MM_T_ACK, MM_T_MODE, MM_T_STATUS, MM_T_LOCAL_EVENT,
                                     MM_T_FIRED, MM_T_CANCEL, MM_T_CANCELLED, MM_T_NOP};
    uint8_t fire_bad[3] = {8, 0x21, 0x43};
    uint8_t q_status = MM_T_STATUS;
    uint8_t echo[64][MM_DEC_CAPACITY > 40 ? MM_DEC_CAPACITY : 40];
    uint8_t echo_len[64];
    int n;

    (void)pf_tx_next();
    drain();
    pf_tick();
    pf_tick();
    drain();                                  /* TIMECODEs 1, 2 */
    for (size_t i = 0; i < sizeof others; i++)
        send(others[i], zeros, mm_msg_body_len(others[i]));
    assert_int_equal(drain(), 0);             /* not requests of the profiler: no answer */
    assert_int_equal(pf_counter(PF_C_RX_OK), sizeof others);
    assert_int_equal(pf_counter(PF_C_RX_BAD_MESSAGE), 0);

    send(0x07, zeros, 0);                     /* unknown type (0x06 is BAUD since version 4) */
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_UNKNOWN_TYPE, 0x07, 0, 2);
    send(MM_T_TIMECODE, zeros, 3);            /* wrong length */
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_BAD_LENGTH, MM_T_TIMECODE, 0, 2);
    send(MM_T_FIRE, fire_bad, 3);             /* a request with a field out of range */
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_BAD_VALUE, MM_T_FIRE, 0x4321, 2);
    send(MM_T_QUERY, &q_status, 1);           /* a request the profiler cannot serve (no STATUS) */
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_BAD_VALUE, MM_T_QUERY, 0, 2);
    assert_int_equal(pf_counter(PF_C_RX_BAD_MESSAGE), 2);
    assert_int_equal(pf_counter(PF_C_FIRE_FRAMES), 0);

    /* A line looped back onto itself: the profiler's own ERROR comes back and is dropped. */
    send(0x2F, zeros, 0);
    n = drain();
    assert_int_equal(n, 1);
    memcpy(echo, pay, sizeof echo);
    memcpy(echo_len, paylen, sizeof echo_len);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++)
            send(echo[i][0], echo[i] + 2, (uint8_t)(echo_len[i] - 2));
        n = drain();
        assert_int_equal(n, 0);
    }

    /* Two bad frames before the foreground runs: one ERROR pending at a time, the other not sent
     * (tx_dropped), both counted in rx_bad_message. */
    send(0x07, zeros, 0);
    send(0x0F, zeros, 0);
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_UNKNOWN_TYPE, 0x07, 0, 2);
    assert_int_equal(pf_counter(PF_C_TX_DROPPED), 1);
}

/* Feeds one byte the board wrote itself (pf_tick_tx's) to the test's decoder. */
static void wire_byte(int16_t b)
{
    assert_true(b >= 0);
    assert_int_equal(mm_dec_push(&rx, (uint8_t)b), MM_DEC_BUSY);
}

/* Pulls n bytes of the frame on the line, as the transmit ISR would (no pf_service between). */
static void pull(int n)
{
    while (n--)
        wire_byte(pf_tx_next());
}

/* Runs pf_service until it kicks the transmitter (a frame's CRC is folded one byte per call). */
static void until_kick(void)
{
    uint32_t k = host_kicks;
    while (host_kicks == k)
        assert_true(pf_service());
}

static void test_timecode_ahead_starts_with_tick(void **st)
{
    (void)st;
    (void)pf_tx_next();
    assert_int_equal(drain(), 1);          /* HELLO (seq 0); then the next TIMECODE is encoded ahead */
    for (uint32_t t = 1; t <= 3; t++) {
        int16_t b = pf_tick_tx();          /* the tick ISR, before its port write */
        assert_true(b > 0);
        pf_tick();
        wire_byte(b);                      /* the board wrote it to the transmitter */
        assert_int_equal(drain(), 1);      /* the rest from pf_tx_next, and the next one armed */
        assert_int_equal(pay[0][0], MM_T_TIMECODE);
        assert_int_equal(pay[0][1], t);    /* seq */
        assert_int_equal(mm_get_u32(pay[0] + 2), t);
    }
    assert_int_equal(pf_counter(PF_C_TICKS_MISSED), 0);
}

static void test_timecode_ahead_kicked_by_tick(void **st)
{
    (void)st;
    (void)pf_tx_next();
    drain();
    uint32_t k = host_kicks;
    pf_tick();                             /* a board that does not call pf_tick_tx */
    assert_int_equal(host_kicks, k + 1);
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_TIMECODE);
    assert_int_equal(pay[0][1], 1);
    assert_int_equal(mm_get_u32(pay[0] + 2), 1);
}

static void test_timecode_ahead_taken_back_by_result(void **st)
{
    (void)st;
    struct pf_stamp s = {0, 0, 100};
    (void)pf_tx_next();
    drain();                               /* TIMECODE(1, seq 1) armed */
    pf_event(2, 1, &s);
    assert_int_equal(drain(), 1);          /* the RESULT takes seq 1 ... */
    assert_int_equal(pay[0][0], MM_T_RESULT);
    assert_int_equal(pay[0][1], 1);
    wire_byte(pf_tick_tx());               /* ... and the TIMECODE armed again carries seq 2 */
    pf_tick();
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_TIMECODE);
    assert_int_equal(pay[0][1], 2);
    assert_int_equal(mm_get_u32(pay[0] + 2), 1);
}

static void test_timecode_ahead_right_after_busy_frame(void **st)
{
    (void)st;
    struct pf_stamp s = {0, 0, 100};
    (void)pf_tx_next();
    drain();
    pf_event(2, 1, &s);
    until_kick();                          /* RESULT (seq 1) on the line */
    pull(3);
    assert_true(pf_service());             /* the foreground arms TIMECODE(1, seq 2) meanwhile */
    assert_false(pf_service());
    assert_int_equal(pf_tick_tx(), -1);    /* the line is busy: not now ... */
    pf_tick();
    assert_int_equal(drain(), 2);          /* ... but right after the RESULT, by the transmit ISR */
    assert_int_equal(pay[0][0], MM_T_RESULT);
    assert_int_equal(pay[1][0], MM_T_TIMECODE);
    assert_int_equal(pay[1][1], 2);
    assert_int_equal(mm_get_u32(pay[1] + 2), 1);
    assert_int_equal(pf_counter(PF_C_TICKS_MISSED), 0);
}

static void test_timecode_ahead_due_dropped_by_next_tick(void **st)
{
    (void)st;
    struct pf_stamp s = {0, 0, 100};
    (void)pf_tx_next();
    drain();
    pf_event(2, 1, &s);
    until_kick();
    assert_true(pf_service());             /* TIMECODE(1, seq 2) armed */
    pf_tick();                             /* due after the RESULT ... */
    pf_tick();                             /* ... which is still on the line: tick 1 is missed */
    assert_int_equal(pf_counter(PF_C_TICKS_MISSED), 1);
    assert_int_equal(drain(), 2);
    assert_int_equal(pay[0][0], MM_T_RESULT);
    assert_int_equal(pay[1][0], MM_T_TIMECODE);
    assert_int_equal(pay[1][1], 2);        /* the dropped frame's seq was never used */
    assert_int_equal(mm_get_u32(pay[1] + 2), 2);
    wire_byte(pf_tick_tx());               /* and the next tick is back on the fast path */
    pf_tick();
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][1], 3);
    assert_int_equal(mm_get_u32(pay[0] + 2), 3);
}

/* A FIRE that finds the result ring full is lost, and so is its tag. It must not leave
 * its tag queued: the next FIRE's RESULT would carry the dropped FIRE's tag, and after
 * PF_FIRE_TAGS such drops the tag FIFO would stay full and every FIRE would be lost. */
static void test_fire_dropped_on_full_ring_keeps_no_tag(void **st)
{
    (void)st;
    struct pf_stamp s = {0, 0, 100};
    uint8_t fire_a[3] = {3, 0xAA, 0xAA};
    uint8_t fire_b[3] = {4, 0xBB, 0xBB};
    (void)pf_tx_next();
    drain();
    for (int round = 0; round < PF_FIRE_TAGS + 8; round++) {
        uint16_t ov = pf_counter(PF_C_OVERFLOWS);
        for (int i = 0; i < PF_RING_LEN; i++)
            pf_event((uint8_t)(i & 7), 1, &s);
        assert_int_equal(pf_ring_count(), PF_RING_LEN);
        send(MM_T_FIRE, fire_a, 3); /* no room: lost */
        assert_int_equal(pf_counter(PF_C_OVERFLOWS), ov + 1);
        assert_int_equal(pf_ring_count(), PF_RING_LEN);
        assert_int_equal(drain(), PF_RING_LEN);
        for (int i = 0; i < PF_RING_LEN; i++)
            assert_int_equal(pay[i][2 + MM_RESULT_FLAGS] & MM_RESULT_FLAG_FIRE, 0);
        send(MM_T_FIRE, fire_b, 3);
        assert_int_equal(pf_ring_count(), 1);
        assert_int_equal(pf_counter(PF_C_OVERFLOWS), ov + 1); /* this one was stored */
        assert_int_equal(drain(), 1);
        assert_int_equal(pay[0][0], MM_T_RESULT);
        assert_int_equal(pay[0][2 + MM_RESULT_EVENT_ID], 4);
        assert_int_equal(pay[0][2 + MM_RESULT_FLAGS], MM_RESULT_FLAG_FIRE | MM_RESULT_FLAG_LOST_BEFORE);
        assert_int_equal(mm_get_u16(pay[0] + 2 + MM_RESULT_TAG), 0xBBBB);
    }
    assert_int_equal(pf_counter(PF_C_FIRE_FRAMES), 2 * (PF_FIRE_TAGS + 8));
}


/* ---- BAUD (SPEC.md 0x06, protocol version 4) -------------------------------------------------- */

static void send_baud(uint16_t hundreds)
{
    uint8_t b[MM_BAUD_LEN];
    mm_put_u16(b + MM_BAUD_HUNDREDS, hundreds);
    send(MM_T_BAUD, b, sizeof b);
}

/* Taken while a RESULT is on the line: that frame ends at the old rate, then the switch (UBRR 16 for
 * 115200: 117647 baud, +2.1 %), the lone delimiter and HELLO reporting 115200; a frame queued before
 * the switch goes after the HELLO. */
static void test_baud_accepted_after_current_frame(void **st)
{
    (void)st;
    struct pf_stamp s = {0, 0, 100};
    int16_t b;
    int n = 0;

    (void)pf_tx_next();
    assert_int_equal(drain(), 1);           /* HELLO at 9600 */
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_BAUD), 9600);
    pf_event(2, 1, &s);
    until_kick();                           /* RESULT on the line */
    pull(3);
    send_baud(1152);
    pf_event(3, 0, &s);                     /* queued, not begun */
    assert_int_equal(host_baud_sets, 0);    /* not while the RESULT is out */
    (void)pf_service();
    assert_int_equal(host_baud_sets, 0);
    while ((b = pf_tx_next()) >= 0)         /* the rest of the RESULT, at the old rate */
        if (mm_dec_push(&rx, (uint8_t)b) == MM_DEC_FRAME)
            n++;
    assert_int_equal(n, 1);
    assert_int_equal(rx.buf[0], MM_T_RESULT);
    assert_int_equal(host_baud_sets, 0);
    until_kick();                           /* switches, then the HELLO */
    assert_int_equal(host_baud_sets, 1);
    assert_int_equal(host_baud_div, 17);    /* UBRR 16 */
    assert_int_equal(host_char_counts, 1360);
    assert_int_equal(pf_tx_next(), 0);      /* the lone delimiter first */
    assert_int_equal(drain(), 2);
    assert_int_equal(pay[0][0], MM_T_HELLO);
    assert_int_equal(paylen[0], MM_HDR_LEN + MM_HELLO_LEN);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_BAUD), 115200);
    assert_int_equal(pay[1][0], MM_T_RESULT);
    assert_int_equal(pay[1][2 + MM_RESULT_EVENT_ID], 3);
    /* QUERY(HELLO) later still says 115200 */
    {
        uint8_t q = MM_T_HELLO;
        send(MM_T_QUERY, &q, 1);
    }
    assert_int_equal(drain(), 1);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_BAUD), 115200);
    assert_int_equal(pf_counter(PF_C_RX_OK), 2);
}

/* Every standard rate the AVR makes within 2.5 %; one it cannot is refused with ERROR BAD_VALUE at the
 * old rate, nothing changed. */
static void test_baud_rejected_bad_value(void **st)
{
    (void)st;
    static const uint16_t ok[] = {96, 192, 384, 576, 1152};

    (void)pf_tx_next();
    drain();
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_true(board_baud_check(ok[i]) != 0);
    assert_int_equal(board_baud_check(1152), 17);
    send_baud(0);
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_BAD_VALUE, MM_T_BAUD, 0, 0);
    send_baud(65535);                       /* 6553500 baud: UBRR 0 makes 2 M */
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_BAD_VALUE, MM_T_BAUD, 0, 0);
    send_baud(2500);                        /* 250000 exactly (UBRR 7): taken */
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_HELLO);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_HELLO_BAUD), 250000);
    send_baud(19000);                       /* 1.9 M: UBRR 0 makes 2 M, +5.3 % */
    assert_int_equal(drain(), 1);
    assert_error(0, MM_ERR_BAD_VALUE, MM_T_BAUD, 0, 0);
    assert_int_equal(host_baud_sets, 1);
    assert_int_equal(host_baud_div, 8);
}

/* A FIRE after the switch goes back by one character at the new rate (1360 counts at 115200). */
static void test_baud_fire_backdating_uses_new_rate(void **st)
{
    (void)st;
    uint8_t fire[3] = {6, 0x34, 0x12};

    (void)pf_tx_next();
    drain();
    send_baud(1152);
    assert_int_equal(drain(), 1);
    pf_tick();
    drain();
    host_now = 20000;
    send(MM_T_FIRE, fire, 3);
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_RESULT);
    assert_int_equal(mm_get_u32(pay[0] + 2 + MM_RESULT_COUNTS), 20000 - 1360);
}


/* ---- Histograms (SPEC.md 0x13 HIST_ARM, 0x14 HIST_SUMMARY, 0x15 HIST_CELLS, protocol version 6) -------- */

#define TC PF_TICK_COUNTS
#define EARLY 1600u   /* 100 us at 16 MHz: the scheduler's SERIES_EARLY_COUNTS */

/* Every frame but TIMECODE (and HELLO) since the last log_reset, in order. */
static uint8_t lg[256][MM_DEC_CAPACITY > 40 ? MM_DEC_CAPACITY : 40];
static int ln;

static void log_reset(void)
{
    ln = 0;
}

/* drain(), keeping the frames of interest in lg[] */
static int pump(void)
{
    int n = drain();
    for (int i = 0; i < n; i++) {
        if (pay[i][0] == MM_T_TIMECODE || pay[i][0] == MM_T_HELLO)
            continue;
        assert_true(ln < 256);
        memcpy(lg[ln++], pay[i], sizeof lg[0]);
    }
    return n;
}

/* Ticks until the extended timecode is tc, pumping after each. */
static void tick_to(uint32_t tc)
{
    while (pf_timecode() < tc) {
        pf_tick();
        pump();
    }
}

static void hist_arm(uint32_t tc, uint32_t first, uint32_t period, uint32_t count, uint32_t late, uint16_t early,
                     uint8_t id, uint8_t shift, uint8_t report_ticks, uint8_t flags)
{
    uint8_t b[MM_HIST_ARM_LEN];
    mm_put_u32(b + MM_HIST_ARM_TIMECODE, tc);
    mm_put_u32(b + MM_HIST_ARM_FIRST, first);
    mm_put_u32(b + MM_HIST_ARM_PERIOD, period);
    mm_put_u32(b + MM_HIST_ARM_COUNT, count);
    mm_put_u32(b + MM_HIST_ARM_LATE, late);
    mm_put_u16(b + MM_HIST_ARM_EARLY, early);
    b[MM_HIST_ARM_EVENT_ID] = id;
    b[MM_HIST_ARM_CELL_SHIFT] = shift;
    b[MM_HIST_ARM_REPORT_TICKS] = report_ticks;
    b[MM_HIST_ARM_FLAGS] = flags;
    send(MM_T_HIST_ARM, b, sizeof b);
}

/* An executor edge of id stamped at (tc, counts): tc at most 255 ticks before the present. */
static void edge_at(uint8_t id, uint32_t tc, uint32_t counts)
{
    struct pf_stamp s = {(uint8_t)tc, 0, counts};
    pf_event(id, 1, &s);
}

/* Event k's moment of a series (64-bit here: the test's own arithmetic, not the firmware's). */
static void moment(uint32_t tc, uint32_t first, uint32_t period, uint32_t k, uint32_t *mt, uint32_t *mc)
{
    uint64_t m = (uint64_t)first + (uint64_t)k * period;
    *mt = tc + (uint32_t)(m / TC);
    *mc = (uint32_t)(m % TC);
}

/* An edge `lat` counts (signed) after event k's moment. */
static void edge_lat(uint32_t tc, uint32_t first, uint32_t period, uint8_t id0, uint32_t k, int32_t lat)
{
    uint32_t mt, mc;
    int64_t c;
    moment(tc, first, period, k, &mt, &mc);
    c = (int64_t)mc + lat;
    while (c < 0) {
        c += TC;
        mt--;
    }
    while (c >= (int64_t)TC) {
        c -= TC;
        mt++;
    }
    edge_at((uint8_t)((id0 + k) & 7u), mt, (uint32_t)c);
}

struct summ {
    uint16_t report;
    uint8_t flags;
    uint32_t ok, late, early, missed;
    uint16_t stray;
    uint32_t min, max, worst;
    uint64_t sum;
    uint8_t blocks;
};

static struct summ summary_of(const uint8_t *p)
{
    const uint8_t *b = p + 2;
    struct summ s;
    assert_int_equal(p[0], MM_T_HIST_SUMMARY);
    s.report = mm_get_u16(b + MM_HIST_SUMMARY_REPORT);
    s.flags = b[MM_HIST_SUMMARY_FLAGS];
    s.ok = mm_get_u32(b + MM_HIST_SUMMARY_OK);
    s.late = mm_get_u32(b + MM_HIST_SUMMARY_LATE);
    s.early = mm_get_u32(b + MM_HIST_SUMMARY_EARLY);
    s.missed = mm_get_u32(b + MM_HIST_SUMMARY_MISSED);
    s.stray = mm_get_u16(b + MM_HIST_SUMMARY_STRAY);
    s.min = mm_get_u32(b + MM_HIST_SUMMARY_MIN);
    s.max = mm_get_u32(b + MM_HIST_SUMMARY_MAX);
    s.worst = mm_get_u32(b + MM_HIST_SUMMARY_WORST);
    s.sum = mm_get_u32(b + MM_HIST_SUMMARY_SUM_LO) | ((uint64_t)mm_get_u16(b + MM_HIST_SUMMARY_SUM_HI) << 32);
    s.blocks = b[MM_HIST_SUMMARY_BLOCKS];
    return s;
}

/* lg[i] is HIST_CELLS of report `report` for the block of `cell`; returns its count of `cell`. */
static uint32_t cells_count(int i, uint16_t report, uint16_t cell)
{
    const uint8_t *b = lg[i] + 2;
    assert_int_equal(lg[i][0], MM_T_HIST_CELLS);
    assert_int_equal(mm_get_u16(b + MM_HIST_CELLS_REPORT), report);
    assert_int_equal(mm_get_u16(b + MM_HIST_CELLS_CELL), cell & ~7u);
    return mm_get_u32(b + MM_HIST_CELLS_C0 + 4u * (cell & 7u));
}

static void query_hist(void)
{
    uint8_t q = MM_T_HIST_SUMMARY;
    send(MM_T_QUERY, &q, 1);
}

static void hist_start(void)
{
    (void)pf_tx_next();
    drain();            /* HELLO */
    log_reset();
}

/* HELLO says version 6, firmware 2.0, flag bit 3; a HIST_ARM is answered by HIST_SUMMARY report 0,
 * every count 0 (min 0xFFFFFFFF: none yet), the armed flag, no HIST_CELLS. */
static void test_hist_hello_and_arm_answer(void **st)
{
    (void)st;
    struct summ s;
    (void)pf_tx_next();
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][2 + MM_HELLO_PROTO_VERSION], 6);
    assert_int_equal(mm_get_u16(pay[0] + 2 + MM_HELLO_FW_VERSION), 0x0200);
    assert_int_equal(pay[0][2 + MM_HELLO_FLAGS], MM_HELLO_FLAG_CAPTURE | MM_HELLO_FLAG_HIST);
    log_reset();
    hist_arm(3, 1000, 16000, 100, 16000, EARLY, 0, 4, 14, 0);
    pump();
    assert_int_equal(ln, 1);
    s = summary_of(lg[0]);
    assert_int_equal(s.report, 0);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_ARMED);
    assert_int_equal(s.ok + s.late + s.early + s.missed + s.stray + s.max + s.worst + s.sum + s.blocks, 0);
    assert_int_equal(s.min, 0xFFFFFFFFu);
    assert_int_equal(pf_counter(PF_C_RX_OK), 1);
}

/* Each out-of-range field is refused with ERROR BAD_VALUE (ref_type 0x13, ref_tag 0) and changes
 * nothing: the series armed before runs on. */
static void test_hist_bad_value(void **st)
{
    (void)st;
    struct summ s;
    hist_start();
    hist_arm(1, 0, 100000, 16, 16000, EARLY, 0, 4, 200, 0);
    pump();
    tick_to(1);
    edge_lat(1, 0, 100000, 0, 0, 37);           /* one event joined: the series' state to keep */
    pump();
    log_reset();
    hist_arm(1, 0, 100000, 16, 16000, EARLY, 8, 4, 14, 0);      /* event_id above 7 */
    assert_int_equal(pump(), 1);
    assert_error(0, MM_ERR_BAD_VALUE, MM_T_HIST_ARM, 0, 1);
    hist_arm(1, 0, 0, 16, 16000, EARLY, 0, 4, 14, 0);           /* period 0 */
    pump();
    hist_arm(1, 0, TC, 16, 16000, EARLY, 0, 4, 14, 0);          /* period not below tick_counts */
    pump();
    hist_arm(1, TC, 1000, 16, 16000, EARLY, 0, 4, 14, 0);       /* first not below tick_counts */
    pump();
    hist_arm(1, 0, 1000, 16, 16000, EARLY, 0, 16, 14, 0);       /* cell_shift above 15 */
    pump();
    hist_arm(1, 0, 1000, 16, 16000, EARLY, 0, 4, 0, 0);         /* report_ticks 0 */
    pump();
    hist_arm(1, 0, 1000, 0, 16000, EARLY, 0, 4, 0, 0);          /* report_ticks 0, count 0 too */
    pump();
    assert_int_equal(ln, 7);
    for (int i = 0; i < ln; i++) {
        assert_int_equal(lg[i][0], MM_T_ERROR);
        assert_int_equal(lg[i][2 + MM_ERROR_CODE], MM_ERR_BAD_VALUE);
        assert_int_equal(lg[i][2 + MM_ERROR_REF_TYPE], MM_T_HIST_ARM);
        assert_int_equal(mm_get_u16(lg[i] + 2 + MM_ERROR_REF_TAG), 0);
    }
    assert_int_equal(pf_counter(PF_C_RX_OK), 8);
    log_reset();
    query_hist();                               /* the series armed first is untouched */
    pump();
    assert_int_equal(ln, 2);
    assert_int_equal(cells_count(0, 1, 2), 1);
    s = summary_of(lg[1]);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_ARMED);
    assert_int_equal(s.ok, 1);
    assert_int_equal(s.min, 37);
    /* period 0 and period >= tick_counts are fine with count 0 (the end of a series) */
    log_reset();
    hist_arm(0, 0, 0, 0, 0, 0, 0, 0, 1, 0);
    pump();
    assert_int_equal(lg[ln - 1][0], MM_T_HIST_SUMMARY);
    assert_int_equal(summary_of(lg[ln - 1]).flags, MM_HIST_SUMMARY_FLAG_FINAL);
}

/* ok, late and early edges: exact latencies and cells, min/max/sum/worst over ok and late only. */
static void test_hist_join_ok_late_early(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 2, F = 1000, P = 100000;
    hist_start();
    hist_arm(T, F, P, 16, 3200, EARLY, 0, 4, 200, 0);
    pump();
    tick_to(2);
    log_reset();
    edge_lat(T, F, P, 0, 0, 37);      /* 37 counts late, cell_shift 4: cell 2, ok */
    edge_lat(T, F, P, 0, 1, 5000);    /* at or above late (3200): late, cell 312 */
    edge_lat(T, F, P, 0, 2, -100);    /* before its moment, within early: early, no cell */
    edge_lat(T, F, P, 0, 3, 3199);    /* just below late: ok, cell 199 */
    edge_lat(T, F, P, 0, 4, 0);       /* at its moment: ok, cell 0 */
    edge_lat(T, F, P, 0, 5, -(int32_t)EARLY); /* the earliest an edge may come: early */
    pump();
    assert_int_equal(ln, 0);          /* no RESULT (no raw flag), no report yet */
    assert_int_equal(pf_ring_count(), 0);
    query_hist();
    pump();
    assert_int_equal(ln, 4);          /* blocks 0 (cells 0, 2), 24 (199), 39 (312), then the summary */
    assert_int_equal(cells_count(0, 1, 0), 1);
    assert_int_equal(cells_count(0, 1, 2), 1);
    assert_int_equal(cells_count(1, 1, 199), 1);
    assert_int_equal(cells_count(2, 1, 312), 1);
    assert_int_equal(cells_count(2, 1, 313), 0);
    s = summary_of(lg[3]);
    assert_int_equal(s.report, 1);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_ARMED);
    assert_int_equal(s.ok, 3);
    assert_int_equal(s.late, 1);
    assert_int_equal(s.early, 2);
    assert_int_equal(s.missed, 0);
    assert_int_equal(s.stray, 0);
    assert_int_equal(s.min, 0);
    assert_int_equal(s.max, 5000);
    assert_int_equal(s.worst, 1);
    assert_int_equal(s.sum, 37 + 5000 + 3199 + 0);
    assert_int_equal(s.blocks, 3);
}

/* A missed event: counted when a later edge of its id arrives, and, with no edge at all, when its
 * window has closed at a report; then the series is over: a final full report. */
static void test_hist_missed(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 1, F = 0, P = 100000;
    hist_start();
    hist_arm(T, F, P, 10, 16000, EARLY, 0, 4, 3, 0);
    pump();
    tick_to(1);
    log_reset();
    /* event 0 (id 0) has no edge; event 8 (id 0 again, 8 periods on) has: event 0 is missed */
    for (uint32_t k = 1; k < 8; k++)
        edge_lat(T, F, P, 0, k, 40);
    edge_lat(T, F, P, 0, 8, 40);
    pump();
    assert_int_equal(ln, 0);
    /* event 9 (id 1) never comes; at the report at timecode 3 (report_ticks 3 from the arm at 0) its
     * window has closed (moment 900000 + 8 periods + early = 1701600 counts after tick 1 began, the report
     * 2 ticks = 2275556 after): missed, and that was the last event */
    tick_to(2);
    assert_int_equal(ln, 0);
    tick_to(3);
    assert_int_equal(ln, 2);
    assert_int_equal(cells_count(0, 1, 2), 8);  /* 40 >> 4 */
    s = summary_of(lg[1]);
    assert_int_equal(s.report, 1);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_FINAL);
    assert_int_equal(s.ok, 8);
    assert_int_equal(s.missed, 2);
    assert_int_equal(s.blocks, 1);
    /* disarmed: no more reports, edges go out as RESULTs again */
    log_reset();
    tick_to(8);
    assert_int_equal(ln, 0);
    edge_at(1, 8, 10);
    pump();
    assert_int_equal(ln, 1);
    assert_int_equal(lg[0][0], MM_T_RESULT);
    assert_int_equal(mm_get_u16(lg[0] + 2 + MM_RESULT_TAG), 8); /* the 8 binned edges counted */
}

/* A window still open at a report is not closed: the event waits for its edge. */
static void test_hist_window_open_at_report(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 1, F = TC - 2000, P = 200000;
    hist_start();
    hist_arm(T, F, P, 1, 16000, EARLY, 3, 4, 2, 0);
    pump();
    tick_to(2);                       /* report 1: event 0's window (to (2, 1598000 - TC)) is open */
    assert_int_equal(ln, 2);
    s = summary_of(lg[1]);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_ARMED);
    assert_int_equal(s.missed + s.blocks, 0);
    log_reset();
    edge_lat(T, F, P, 3, 0, 300000);  /* in the next tick, 300000 late: joined, the last: final */
    pump();
    assert_int_equal(ln, 2);
    assert_int_equal(cells_count(0, 2, 1000), 1);  /* 300000 >> 4 = 18750: the overflow cell */
    s = summary_of(lg[1]);
    assert_int_equal(s.report, 2);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_FINAL);
    assert_int_equal(s.ok, 0);
    assert_int_equal(s.late, 1);               /* (late bound 16000) */
    assert_int_equal(s.max, 300000);
}

/* Stray edges: before the first moment's window, a second edge for an event already joined, an id
 * with no event, and after the last event of an id. */
static void test_hist_stray(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 2, F = 500000, P = 10000;
    hist_start();
    hist_arm(T, F, P, 3, 16000, EARLY, 6, 4, 200, 0);  /* ids 6, 7, 0 */
    pump();
    tick_to(2);
    log_reset();
    edge_lat(T, F, P, 6, 0, -(int32_t)EARLY - 1);  /* before event 0's window: stray */
    edge_at(6, 1, 1000);                           /* a tick earlier still: stray */
    edge_lat(T, F, P, 6, 0, 100);                  /* event 0 */
    edge_lat(T, F, P, 6, 0, 200);                  /* event 0 again: stray */
    edge_lat(T, F, P, 6, 1, 100);                  /* event 1 (id 7) */
    edge_at(3, 2, F + 100);                        /* id 3: no event of the series */
    edge_lat(T, F, P, 6, 8, 0);                    /* id 6: its next moment after its last event: stray */
    pump();
    query_hist();
    pump();
    s = summary_of(lg[ln - 1]);
    assert_int_equal(s.ok, 2);
    assert_int_equal(s.stray, 5);
    assert_int_equal(s.missed, 0);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_ARMED); /* event 2 (id 0) still to come */
}

/* The overflow cell (1000) and the last ordinary cell (999); the block of cell 1000 has 7 cells always 0. */
static void test_hist_overflow_cell(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 1, F = 0, P = 10000;
    hist_start();
    hist_arm(T, F, P, 4, 0xFFFFFFFFu, EARLY, 0, 0, 200, 0);   /* cell_shift 0: a cell is a count */
    pump();
    tick_to(1);
    log_reset();
    edge_lat(T, F, P, 0, 0, 999);
    edge_lat(T, F, P, 0, 1, 1000);
    edge_lat(T, F, P, 0, 2, 9999);
    query_hist();
    pump();
    assert_int_equal(ln, 3);
    assert_int_equal(cells_count(0, 1, 999), 1);
    assert_int_equal(cells_count(1, 1, 1000), 2);
    for (uint16_t c = 1001; c < 1008; c++)
        assert_int_equal(cells_count(1, 1, c), 0);
    s = summary_of(lg[2]);
    assert_int_equal(s.ok, 3);
    assert_int_equal(s.late, 0);
    assert_int_equal(s.min, 999);
    assert_int_equal(s.max, 9999);
    assert_int_equal(s.worst, 2);
    assert_int_equal(s.sum, 999 + 1000 + 9999);
    assert_int_equal(s.blocks, 2);
}

/* Periodic reports: only the blocks changed since they were last sent, then the summary with their
 * number in `blocks`; cumulative counts; windows closed by each report counted missed; a QUERY(0x14)
 * sends every block that is not 0. */
static void test_hist_periodic_changed_blocks(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 1, F = 0, P = 100000;
    hist_start();
    hist_arm(T, F, P, 1000, 16000, EARLY, 0, 4, 3, 0);   /* armed at 0: reports at 3, 6, 9 */
    pump();
    log_reset();
    tick_to(1);
    edge_lat(T, F, P, 0, 0, 37);                  /* cell 2 */
    edge_lat(T, F, P, 0, 1, 5000);                /* cell 312 */
    tick_to(2);
    edge_lat(T, F, P, 0, 11, 40);                 /* cell 2 again */
    pump();
    assert_int_equal(ln, 0);
    tick_to(3);
    assert_int_equal(ln, 3);
    assert_int_equal(cells_count(0, 1, 2), 2);
    assert_int_equal(cells_count(1, 1, 312), 1);
    s = summary_of(lg[2]);
    assert_int_equal(s.report, 1);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_ARMED);
    assert_int_equal(s.blocks, 2);
    assert_int_equal(s.ok, 3);
    /* windows closed by (3, 0) - early: m_k + 8 P <= 2 TC - 1600, k <= 14; 3 of them joined */
    assert_int_equal(s.missed, 12);
    log_reset();
    edge_lat(T, F, P, 0, 30, 40);                 /* cell 2: only block 0 changes */
    tick_to(6);
    assert_int_equal(ln, 2);
    assert_int_equal(cells_count(0, 2, 2), 3);    /* cumulative */
    s = summary_of(lg[1]);
    assert_int_equal(s.report, 2);
    assert_int_equal(s.blocks, 1);
    assert_int_equal(s.ok, 4);
    assert_int_equal(s.missed, 49 - 4);           /* k <= 48: m_k + 8 P <= 5 TC - 1600 */
    log_reset();
    tick_to(9);
    assert_int_equal(ln, 1);                      /* nothing changed: the summary alone */
    s = summary_of(lg[0]);
    assert_int_equal(s.report, 3);
    assert_int_equal(s.blocks, 0);
    log_reset();
    query_hist();
    pump();
    assert_int_equal(ln, 3);                      /* every block not 0 */
    assert_int_equal(cells_count(0, 4, 2), 3);
    assert_int_equal(cells_count(1, 4, 312), 1);
    s = summary_of(lg[2]);
    assert_int_equal(s.report, 4);
    assert_int_equal(s.blocks, 2);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_ARMED);
}

/* HIST_ARM with count 0 ends the series at once: the final full report (FINAL, not armed), then no
 * more reports; a HIST_ARM while a series runs replaces it (report 0, every figure 0 again). */
static void test_hist_end_and_replace(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 1, F = 0, P = 100000;
    hist_start();
    hist_arm(T, F, P, 1000, 16000, EARLY, 0, 4, 5, 0);
    pump();
    tick_to(1);
    edge_lat(T, F, P, 0, 0, 37);
    pump();
    log_reset();
    hist_arm(T, F, P, 1000, 16000, EARLY, 0, 4, 5, 0);   /* replaces it */
    pump();
    assert_int_equal(ln, 1);
    s = summary_of(lg[0]);
    assert_int_equal(s.report, 0);
    assert_int_equal(s.ok, 0);
    edge_lat(T, F, P, 0, 1, 50);                 /* cell 3 of the new series */
    pump();
    log_reset();
    hist_arm(0, 0, 0, 0, 0, 0, 0, 0, 1, 0);      /* end */
    pump();
    assert_int_equal(ln, 2);
    assert_int_equal(cells_count(0, 1, 3), 1);
    assert_int_equal(cells_count(0, 1, 2), 0);   /* the first series' cell is gone */
    s = summary_of(lg[1]);
    assert_int_equal(s.report, 1);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_FINAL);
    assert_int_equal(s.ok, 1);
    assert_int_equal(s.missed, 0);               /* event 0's window is still open: not counted */
    assert_int_equal(s.blocks, 1);
    log_reset();
    tick_to(20);
    assert_int_equal(ln, 0);                     /* no periodic report once ended */
    query_hist();                                /* the figures stay, complete */
    pump();
    assert_int_equal(ln, 2);
    s = summary_of(lg[1]);
    assert_int_equal(s.report, 2);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_FINAL);
}

/* Raw flag: edges still go out as RESULTs (and are binned); without it they do not, and their edge count
 * still advances. FIRE RESULTs go out either way. */
static void test_hist_raw_flag(void **st)
{
    (void)st;
    struct summ s;
    uint8_t fire[3] = {5, 0x34, 0x12};
    const uint32_t T = 1, F = 0, P = 100000;
    hist_start();
    hist_arm(T, F, P, 100, 16000, EARLY, 0, 4, 200, MM_HIST_ARM_FLAG_RAW);
    pump();
    tick_to(1);
    log_reset();
    edge_lat(T, F, P, 0, 0, 37);
    edge_lat(T, F, P, 0, 1, 38);
    pump();
    assert_int_equal(ln, 2);
    assert_int_equal(lg[0][0], MM_T_RESULT);
    assert_int_equal(mm_get_u16(lg[0] + 2 + MM_RESULT_TAG), 0);
    assert_int_equal(mm_get_u32(lg[0] + 2 + MM_RESULT_COUNTS), 37);
    assert_int_equal(mm_get_u16(lg[1] + 2 + MM_RESULT_TAG), 1);
    log_reset();
    query_hist();
    pump();
    s = summary_of(lg[ln - 1]);
    assert_int_equal(s.ok, 2);                   /* binned as they went out */
    /* the same without the raw flag */
    hist_arm(T, F, P, 100, 16000, EARLY, 0, 4, 200, 0);
    pump();
    log_reset();
    edge_lat(T, F, P, 0, 0, 37);
    edge_lat(T, F, P, 0, 1, 38);
    host_now = 20000;
    send(MM_T_FIRE, fire, 3);                    /* FIRE: its RESULT all the same */
    edge_lat(T, F, P, 0, 2, 39);
    pump();
    assert_int_equal(ln, 1);
    assert_int_equal(lg[0][0], MM_T_RESULT);
    assert_int_equal(lg[0][2 + MM_RESULT_FLAGS], MM_RESULT_FLAG_FIRE);
    assert_int_equal(mm_get_u16(lg[0] + 2 + MM_RESULT_TAG), 0x1234);
    log_reset();
    query_hist();
    pump();
    s = summary_of(lg[ln - 1]);
    assert_int_equal(s.ok, 3);
    /* the edge count went on: ended, the next edge's RESULT has tag 2 + 3 */
    hist_arm(0, 0, 0, 0, 0, 0, 0, 0, 1, 0);
    pump();
    log_reset();
    edge_at(4, 1, 5);
    pump();
    assert_int_equal(ln, 1);
    assert_int_equal(mm_get_u16(lg[0] + 2 + MM_RESULT_TAG), 5);
}

/* Moments crossing tick boundaries: the first 10 counts before its tick's end, a period that does not
 * divide tick_counts; edges in the tick after their moment, and events far into the series. */
static void test_hist_tick_crossing(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 2, F = TC - 10, P = 300007;
    uint32_t mt, mc;
    hist_start();
    hist_arm(T, F, P, 200, 0xFFFFFFFFu, EARLY, 5, 4, 250, 0);
    pump();
    tick_to(3);
    log_reset();
    edge_at(5, 3, 27);                           /* event 0, due (2, TC - 10): in the next tick, 37 late */
    moment(T, F, P, 1, &mt, &mc);
    assert_int_equal(mt, 3);
    assert_int_equal(mc, 299997);
    edge_at(6, 3, 299997 + 100);                 /* event 1: 100 late, cell 6 */
    pump();
    tick_to(60);
    for (uint32_t k = 2; k < 200; k++) {         /* every event, each 16 k counts late (k < 200) */
        moment(T, F, P, k, &mt, &mc);
        if (mt > pf_timecode())
            tick_to(mt);
        edge_lat(T, F, P, 5, k, (int32_t)(16 * k));
        pump();
    }
    /* the last was joined: the final report */
    s = summary_of(lg[ln - 1]);
    assert_int_equal(s.flags, MM_HIST_SUMMARY_FLAG_FINAL);
    assert_int_equal(s.ok, 200);
    assert_int_equal(s.missed + s.stray + s.early + s.late, 0);
    assert_int_equal(s.min, 32);                 /* event 2 */
    assert_int_equal(s.max, 16 * 199);
    assert_int_equal(s.worst, 199);
    {
        uint64_t sum = 37 + 100;
        for (uint32_t k = 2; k < 200; k++)
            sum += 16 * k;
        assert_int_equal(s.sum, sum);
    }
    /* cells: 37 >> 4 = 2, 100 >> 4 = 6, then cell k for k = 2 .. 199 */
    for (int i = 0; i + 1 < ln; i++) {
        if (lg[i][0] != MM_T_HIST_CELLS || mm_get_u16(lg[i] + 2 + MM_HIST_CELLS_REPORT) != s.report)
            continue;
        uint16_t c0 = mm_get_u16(lg[i] + 2 + MM_HIST_CELLS_CELL);
        for (uint16_t j = 0; j < 8; j++) {
            uint16_t c = (uint16_t)(c0 + j);
            uint32_t want = (c == 2) ? 2 : (c == 6) ? 2 : (c >= 3 && c < 200) ? 1 : 0;
            assert_int_equal(cells_count(i, s.report, c), want);
        }
    }
    assert_int_equal(s.blocks, 25);              /* cells 0 .. 199 */
}

/* A series armed long after its first moment (over DT_MAX = 1883 ticks of 1137778 counts: the clamped,
 * dividing path of skip): every window closed by the first report is counted missed at once, and the
 * moments after it are still exact to the count. */
static void test_hist_long_gap(void **st)
{
    (void)st;
    struct summ s;
    const uint32_t T = 10, F = 123, P = 1000;
    uint64_t closed;
    uint32_t k, mt, mc;
    hist_start();
    tick_to(2100);
    hist_arm(T, F, P, 4000000, 16000, EARLY, 2, 4, 5, 0);
    pump();
    log_reset();
    tick_to(2105);
    /* closed: m_k + 8 P <= (2105 - T) TC - early */
    closed = ((uint64_t)(2105 - T) * TC - EARLY - 8 * P - F) / P + 1;
    s = summary_of(lg[ln - 1]);
    assert_int_equal(s.report, 1);
    assert_int_equal(s.missed, closed);
    /* the next event of an id whose window is open: joined 37 counts late */
    k = (uint32_t)closed + 3;
    moment(T, F, P, k, &mt, &mc);
    assert_int_equal(mt, 2104);                  /* 8 periods before the report: the tick before */
    assert_true(mc + 8 * P + EARLY > TC);        /* its window still open at (2105, 0) */
    edge_lat(T, F, P, 2, k, 37);
    log_reset();
    query_hist();
    pump();
    s = summary_of(lg[ln - 1]);
    assert_int_equal(s.ok, 1);
    assert_int_equal(s.min, 37);
    assert_int_equal(s.worst, k);
    assert_int_equal(s.stray, 0);
    assert_int_equal(s.missed, closed);      /* (k - 8 was among them; k - 1 .. k - 3 have other ids) */
}

/* An edge binned without a RESULT does not take back the TIMECODE encoded ahead: the next tick's frame
 * still starts with the tick, with the next seq. */
static void test_hist_binning_keeps_timecode_ahead(void **st)
{
    (void)st;
    const uint32_t T = 1, F = 0, P = 100000;
    hist_start();
    hist_arm(T, F, P, 100, 16000, EARLY, 0, 4, 200, 0);
    assert_int_equal(drain(), 1);                /* the answer, seq 1; TIMECODE(1, seq 2) armed */
    edge_at(0, 0, 5);                            /* (stray: before the series) */
    assert_true(pf_service());                   /* binned */
    assert_false(pf_service());                  /* nothing more: the TIMECODE ahead stays armed */
    int16_t b = pf_tick_tx();
    assert_true(b > 0);
    pf_tick();
    wire_byte(b);
    assert_int_equal(drain(), 1);
    assert_int_equal(pay[0][0], MM_T_TIMECODE);
    assert_int_equal(pay[0][1], 2);
    assert_int_equal(pf_counter(PF_C_TICKS_MISSED), 0);
}

static void test_led_post(void **st)
{
    (void)st;
    host_led_writes = 0;
    pf_led_post();
    assert_int_equal(host_led_writes, 9);
    assert_int_equal(host_leds, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_hello_first, setup),
        cmocka_unit_test_setup(test_hello_v2_layout_and_reset_cause, setup),
        cmocka_unit_test_setup(test_timecode_priority_and_missed, setup),
        cmocka_unit_test_setup(test_overflow_flag_and_counter, setup),
        cmocka_unit_test_setup(test_spurious_edge_flags_next_result, setup),
        cmocka_unit_test_setup(test_fire_timestamp_and_tag, setup),
        cmocka_unit_test_setup(test_fire_backdated_into_previous_tick, setup),
        cmocka_unit_test_setup(test_garbage_counted, setup),
        cmocka_unit_test_setup(test_counters_v2_layout_and_overrun, setup),
        cmocka_unit_test_setup(test_error_answers_requests_only, setup),
        cmocka_unit_test_setup(test_timecode_ahead_starts_with_tick, setup),
        cmocka_unit_test_setup(test_timecode_ahead_kicked_by_tick, setup),
        cmocka_unit_test_setup(test_timecode_ahead_taken_back_by_result, setup),
        cmocka_unit_test_setup(test_timecode_ahead_right_after_busy_frame, setup),
        cmocka_unit_test_setup(test_timecode_ahead_due_dropped_by_next_tick, setup),
        cmocka_unit_test_setup(test_fire_dropped_on_full_ring_keeps_no_tag, setup),
        cmocka_unit_test_setup(test_baud_accepted_after_current_frame, setup),
        cmocka_unit_test_setup(test_baud_rejected_bad_value, setup),
        cmocka_unit_test_setup(test_baud_fire_backdating_uses_new_rate, setup),
        cmocka_unit_test_setup(test_hist_hello_and_arm_answer, setup),
        cmocka_unit_test_setup(test_hist_bad_value, setup),
        cmocka_unit_test_setup(test_hist_join_ok_late_early, setup),
        cmocka_unit_test_setup(test_hist_missed, setup),
        cmocka_unit_test_setup(test_hist_window_open_at_report, setup),
        cmocka_unit_test_setup(test_hist_stray, setup),
        cmocka_unit_test_setup(test_hist_overflow_cell, setup),
        cmocka_unit_test_setup(test_hist_periodic_changed_blocks, setup),
        cmocka_unit_test_setup(test_hist_end_and_replace, setup),
        cmocka_unit_test_setup(test_hist_raw_flag, setup),
        cmocka_unit_test_setup(test_hist_tick_crossing, setup),
        cmocka_unit_test_setup(test_hist_binning_keeps_timecode_ahead, setup),
        cmocka_unit_test_setup(test_hist_long_gap, setup),
        cmocka_unit_test_setup(test_led_post, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

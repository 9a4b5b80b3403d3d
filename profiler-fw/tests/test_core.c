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
        cmocka_unit_test_setup(test_led_post, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

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

/* Runs the transmitter until idle; returns frames decoded (payloads into pay[]). */
static int drain(void)
{
    int n = 0;
    int16_t b;
    struct { uint8_t buf[MM_MAX_FRAME]; } big;
    (void)big;
    while (pf_service()) {
        while ((b = pf_tx_next()) >= 0) {
            uint8_t r = mm_dec_push(&rx, (uint8_t)b);
            if (r == MM_DEC_FRAME) {
                memcpy(pay[n], rx.buf, mm_dec_payload_len(&rx));
                n++;
            }
            assert_true(r == MM_DEC_BUSY || r == MM_DEC_FRAME);
        }
    }
    return n;
}

static int setup(void **st)
{
    (void)st;
    mm_dec_init(&rx);
    host_now = 0;
    host_prev_len = PF_TICK_COUNTS;
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
    assert_int_equal(pf_counter(PF_C_RX_BAD_MESSAGE), 2);
    send(MM_T_QUERY, &q, 1);
    (void)pf_tx_next();
    assert_int_equal(drain(), 2); /* HELLO, COUNTERS */
    assert_int_equal(pay[1][0], MM_T_COUNTERS);
    assert_int_equal(mm_get_u16(pay[1] + 2 + MM_COUNTERS_RX_BAD_MESSAGE), 2);
    assert_int_equal(mm_get_u16(pay[1] + 2 + MM_COUNTERS_RX_OK), 2);
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
        cmocka_unit_test_setup(test_timecode_priority_and_missed, setup),
        cmocka_unit_test_setup(test_overflow_flag_and_counter, setup),
        cmocka_unit_test_setup(test_fire_timestamp_and_tag, setup),
        cmocka_unit_test_setup(test_fire_backdated_into_previous_tick, setup),
        cmocka_unit_test_setup(test_garbage_counted, setup),
        cmocka_unit_test_setup(test_led_post, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

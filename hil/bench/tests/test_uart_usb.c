/* cmocka tests of uart_usb.c, the USB-serial adapters' line model: when a node's byte reaches the host and a
 * host's byte the line, in global cycles (16 MHz: a 1 ms USB frame is 16000). Run by `make -C hil/bench unit`. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../uart_usb.h"

#define MS 16000ull /* cycles in 1 ms */

static struct usb_params parsed(const char *spec)
{
    struct usb_params p;
    char err[160];
    assert_int_equal(usb_parse(spec, &p, err, sizeof err), 0);
    return p;
}

static void parses_the_models_and_their_parameters(void **state)
{
    struct usb_params p;
    (void)state;
    p = parsed("ideal");
    assert_int_equal(p.kind, USB_IDEAL);
    p = parsed("ftdi");
    assert_int_equal(p.kind, USB_FTDI);
    assert_true(p.period == 16 * MS && p.fill == 62 && p.latency_ms == 16 && p.frame == MS);
    p = parsed("ftdi:latency=1");
    assert_true(p.period == MS && p.latency_ms == 1);
    p = parsed("ftdi:latency=255");
    assert_true(p.period == 255 * MS);
    p = parsed("cdc-16u2");
    assert_int_equal(p.kind, USB_CDC16U2);
    assert_true(p.period == 65536 && p.fill == 97);
    assert_string_equal(usb_kind_name(USB_CDC16U2), "cdc-16u2");
}

static void refuses_unknown_models_and_parameters(void **state)
{
    const char *bad[] = {"", "usb", "ftdi:latency=0", "ftdi:latency=256", "ftdi:latency=", "ftdi:latency=x",
                         "ftdi:latency=-1", "ftdi:latency= 5", "ftdi:latency=5ms", "ftdi:timer=5", "cdc-16u2:latency=1",
                         "ideal:x=1", NULL};
    int i;
    (void)state;
    for (i = 0; bad[i]; i++) {
        struct usb_params p;
        char err[160] = "";
        assert_int_equal(usb_parse(bad[i], &p, err, sizeof err), -1);
        assert_true(err[0] != 0);
    }
}

static uint64_t up(const struct usb_params *p, struct usb_up *s, uint64_t at, uint64_t *moved_from)
{
    return usb_up_byte(p, s, at, moved_from);
}

static void ideal_hands_every_byte_on_at_once(void **state)
{
    struct usb_params p = parsed("ideal");
    struct usb_up s;
    uint64_t moved;
    (void)state;
    usb_up_init(&p, &s);
    assert_true(up(&p, &s, 12345, &moved) == 12345 && moved == 0);
    assert_true(usb_down_byte(&p, 777) == 777);
}

/* AN232B-04: a lone byte waits for the latency timer, which restarts with every packet, status-only ones too:
 * idle, its expiries are a steady grid */
static void ftdi_holds_a_lone_byte_until_its_latency_timer_expires(void **state)
{
    struct usb_params p = parsed("ftdi");
    struct usb_up s;
    uint64_t moved;
    (void)state;
    usb_up_init(&p, &s);
    assert_true(up(&p, &s, 100, &moved) == 16 * MS && moved == 0);
    assert_true(up(&p, &s, 16 * MS, &moved) == 16 * MS);      /* exactly at the expiry: goes with it */
    assert_true(up(&p, &s, 16 * MS + 1, &moved) == 32 * MS);
    assert_true(up(&p, &s, 10 * 16 * MS + 5, &moved) == 11 * 16 * MS); /* idle periods kept the grid */
    assert_true(s.packets == 3 && s.fills == 0);
}

static void ftdi_sends_a_full_packet_at_the_next_frame_and_restarts_its_timer(void **state)
{
    struct usb_params p = parsed("ftdi");
    struct usb_up s;
    uint64_t moved = 0, t = 3 * MS + 100, r = 0;
    int i;
    (void)state;
    usb_up_init(&p, &s);
    for (i = 0; i < 61; i++, t += 320) { /* 500000 baud: a byte every 20 us, 320 cycles */
        r = up(&p, &s, t, &moved);
        assert_true(r == 16 * MS && moved == 0);
    }
    r = up(&p, &s, t, &moved); /* the 62nd data byte: the packet is full */
    assert_true(r == (t + MS - 1) / MS * MS);
    assert_true(moved == 16 * MS); /* the 61 before it go with it, not at the expiry */
    assert_true(s.fills == 1);
    assert_true(up(&p, &s, t + 320, &moved) == r + 16 * MS && moved == 0); /* the timer restarted at the send */
}

static void ftdi_latency_one_ms_holds_at_most_a_frame(void **state)
{
    struct usb_params p = parsed("ftdi:latency=1");
    struct usb_up s;
    uint64_t moved, t;
    (void)state;
    usb_up_init(&p, &s);
    for (t = 1; t < 50 * MS; t += 7777) {
        uint64_t r = up(&p, &s, t, &moved);
        assert_true(r >= t && r - t < MS && r % MS == 0);
    }
}

static void arrivals_never_go_back(void **state)
{
    struct usb_params p = parsed("ftdi");
    struct usb_up s;
    uint64_t moved;
    (void)state;
    usb_up_init(&p, &s);
    assert_true(up(&p, &s, 20 * MS, &moved) == 32 * MS);
    assert_true(up(&p, &s, 5 * MS, &moved) == 32 * MS); /* after the byte before it */
    assert_true(s.last_in == 20 * MS);
}

/* Arduino-usbserial.c: a flush at each Timer0 overflow (65536 cycles, free-running) or past 96 bytes waiting;
 * the IN packet goes at the next 1 ms frame */
static void cdc16u2_flushes_at_each_timer0_overflow_then_the_next_frame(void **state)
{
    struct usb_params p = parsed("cdc-16u2");
    struct usb_up s;
    uint64_t moved;
    (void)state;
    usb_up_init(&p, &s);
    assert_true(up(&p, &s, 100, &moved) == 5 * MS);             /* overflow at 4.096 ms, frame at 5 ms */
    assert_true(up(&p, &s, 65536, &moved) == 5 * MS);           /* at the overflow: with it */
    assert_true(up(&p, &s, 65537, &moved) == 9 * MS);           /* the next: 8.192 ms, frame at 9 ms */
    assert_true(up(&p, &s, 100 * 65536 + 1, &moved) == (101 * 65536 + MS - 1) / MS * MS);
}

static void cdc16u2_flushes_past_96_bytes_without_moving_its_timer(void **state)
{
    struct usb_params p = parsed("cdc-16u2");
    struct usb_up s;
    uint64_t moved = 0, t = 100, r = 0, overflow_frame = 5 * MS;
    int i;
    (void)state;
    usb_up_init(&p, &s);
    for (i = 0; i < 96; i++, t += 32) { /* 5 Mbaud-fast bytes: 97 of them inside one overflow period */
        r = up(&p, &s, t, &moved);
        assert_true(r == overflow_frame && moved == 0);
    }
    r = up(&p, &s, t, &moved); /* the 97th: more than 96 wait */
    assert_true(r == MS && moved == overflow_frame);
    assert_true(up(&p, &s, t + 32, &moved) == overflow_frame); /* the timer runs on: the next overflow */
    assert_true(s.fills == 1);
}

static void host_bytes_reach_the_chip_at_the_next_frame(void **state)
{
    struct usb_params f = parsed("ftdi"), c = parsed("cdc-16u2");
    (void)state;
    assert_true(usb_down_byte(&f, 1) == MS);
    assert_true(usb_down_byte(&f, MS) == MS);
    assert_true(usb_down_byte(&f, MS + 1) == 2 * MS);
    assert_true(usb_down_byte(&c, 0) == 0);
    assert_true(usb_down_byte(&c, 5 * MS - 1) == 5 * MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_the_models_and_their_parameters),
        cmocka_unit_test(refuses_unknown_models_and_parameters),
        cmocka_unit_test(ideal_hands_every_byte_on_at_once),
        cmocka_unit_test(ftdi_holds_a_lone_byte_until_its_latency_timer_expires),
        cmocka_unit_test(ftdi_sends_a_full_packet_at_the_next_frame_and_restarts_its_timer),
        cmocka_unit_test(ftdi_latency_one_ms_holds_at_most_a_frame),
        cmocka_unit_test(arrivals_never_go_back),
        cmocka_unit_test(cdc16u2_flushes_at_each_timer0_overflow_then_the_next_frame),
        cmocka_unit_test(cdc16u2_flushes_past_96_bytes_without_moving_its_timer),
        cmocka_unit_test(host_bytes_reach_the_chip_at_the_next_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

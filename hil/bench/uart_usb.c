/*
 * The USB-serial adapter's line model (uart_usb.h says what each model is and where its rule comes from).
 */
#include "uart_usb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define FRAME_CYCLES (F_CPU / 1000) /* a full-speed USB frame: 1 ms */

/* FTDI AN232B-04, sections 3.3-3.4: a 64-byte IN packet holds 2 status bytes and up to 62 data bytes; the
 * latency timer is 16 ms unless set, 1..255 ms */
#define FTDI_PACKET_DATA 62
#define FTDI_LATENCY_MS 16
#define FTDI_LATENCY_MAX_MS 255

/* Arduino's USB-serial firmware for the ATmega8U2/16U2 (github.com/arduino/ArduinoCore-avr,
 * firmwares/atmegaxxu2/arduino-usbserial/Arduino-usbserial.c, main loop): "if ((TIFR0 & (1 << TOV0)) ||
 * (BufferCount > BUFFER_NEARLY_FULL))" every byte of the USART-to-USB ring goes into the IN endpoint, which
 * CDC_Device_USBTask flushes in the same pass; SetupHardware starts Timer0 with "TCCR0B = (1 << CS02)"
 * (clk/256, an 8-bit timer: overflow every 256 * 256 cycles of the 16 MHz crystal, makefile F_CPU) and
 * never restarts it (the flush clears TOV0 only); Lib/LightweightRingBuff.h: BUFFER_SIZE 128,
 * BUFFER_NEARLY_FULL 96. */
#define CDC16U2_OVERFLOW_CYCLES (256ull * 256ull)
#define CDC16U2_NEARLY_FULL 96

const char *usb_kind_name(enum usb_kind kind)
{
    switch (kind) {
    case USB_FTDI:
        return "ftdi";
    case USB_CDC16U2:
        return "cdc-16u2";
    default:
        return "ideal";
    }
}

/* one k=v of ftdi's: latency=MS */
static int ftdi_option(const char *kv, struct usb_params *p, char *err, unsigned errlen)
{
    static const char key[] = "latency=";
    const char *v = kv + strlen(key);
    char *end;
    unsigned long ms;
    if (strncmp(kv, key, strlen(key))) {
        snprintf(err, errlen, "ftdi: unknown parameter '%s' (latency=MS)", kv);
        return -1;
    }
    ms = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || ms < 1 || ms > FTDI_LATENCY_MAX_MS) {
        snprintf(err, errlen, "ftdi: latency=%s: whole ms from 1 to %d (the chip's range)", v, FTDI_LATENCY_MAX_MS);
        return -1;
    }
    p->latency_ms = (uint32_t)ms;
    p->period = (uint64_t)ms * FRAME_CYCLES;
    return 0;
}

int usb_parse(const char *spec, struct usb_params *p, char *err, unsigned errlen)
{
    char buf[128], *colon, *kv, *save = NULL;
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "line model too long");
        return -1;
    }
    strcpy(buf, spec);
    colon = strchr(buf, ':');
    if (colon)
        *colon = 0;
    memset(p, 0, sizeof *p);
    p->frame = FRAME_CYCLES;
    if (!strcmp(buf, "ideal")) {
        p->kind = USB_IDEAL;
    } else if (!strcmp(buf, "ftdi")) {
        p->kind = USB_FTDI;
        p->fill = FTDI_PACKET_DATA;
        p->latency_ms = FTDI_LATENCY_MS;
        p->period = FTDI_LATENCY_MS * FRAME_CYCLES;
    } else if (!strcmp(buf, "cdc-16u2")) {
        p->kind = USB_CDC16U2;
        p->fill = CDC16U2_NEARLY_FULL + 1;
        p->period = CDC16U2_OVERFLOW_CYCLES;
    } else {
        snprintf(err, errlen, "unknown line model '%s' (ideal, ftdi[:latency=MS], cdc-16u2)", buf);
        return -1;
    }
    if (!colon)
        return 0;
    for (kv = strtok_r(colon + 1, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        if (p->kind != USB_FTDI) {
            snprintf(err, errlen, "%s takes no parameters ('%s')", usb_kind_name(p->kind), kv);
            return -1;
        }
        if (ftdi_option(kv, p, err, errlen))
            return -1;
    }
    return 0;
}

void usb_up_init(const struct usb_params *p, struct usb_up *s)
{
    memset(s, 0, sizeof *s);
    s->next_tick = p->period; /* both timers start with the bench (cycle 0) */
}

/* the first frame start at or after `at` */
static uint64_t frame_at_or_after(const struct usb_params *p, uint64_t at)
{
    return (at + p->frame - 1) / p->frame * p->frame;
}

/* The timer's expiries (ftdi) or overflows (cdc-16u2) before `at` each sent what waited: the first at or
 * after `at` is the next. A byte arriving exactly at one goes with it. */
static void tick_to(const struct usb_params *p, struct usb_up *s, uint64_t at)
{
    if (s->next_tick < at) {
        s->next_tick += (at - s->next_tick + p->period - 1) / p->period * p->period;
        s->pending = 0;
    }
}

uint64_t usb_up_byte(const struct usb_params *p, struct usb_up *s, uint64_t at, uint64_t *moved_from)
{
    uint64_t send, waiting;
    *moved_from = 0;
    if (p->kind == USB_IDEAL)
        return at;
    if (at < s->last_in)
        at = s->last_in;
    s->last_in = at;
    tick_to(p, s, at);
    /* what the bytes already waiting would have: the next expiry (its frame) */
    waiting = frame_at_or_after(p, s->next_tick);
    if (!s->pending++)
        s->packets++;
    if (s->pending < p->fill)
        return waiting;
    /* full (ftdi: 62 data bytes) or nearly full (cdc-16u2: more than 96): sent now, at the next frame */
    send = frame_at_or_after(p, at);
    if (s->pending > 1)
        *moved_from = waiting;
    s->pending = 0;
    s->fills++;
    if (p->kind == USB_FTDI)
        s->next_tick = send + p->period; /* AN232B-04: the timer restarts with each packet sent */
    return send;
}

uint64_t usb_down_byte(const struct usb_params *p, uint64_t at)
{
    return p->kind == USB_IDEAL ? at : frame_at_or_after(p, at);
}

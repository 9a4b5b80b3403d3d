/*
 * The USB-serial adapter between the host and a node's UART, as a line model (--line-model): when a byte
 * the node sent reaches the host, and when a byte the host wrote reaches the UART's line. Pure arithmetic
 * on global cycles (bench.h F_CPU), no bench state, no heap: uart_line.c holds one model per node and calls
 * it per byte; tests/test_uart_usb.c tests it alone.
 *
 *   ideal     no adapter: a byte reaches the host when its stop bit ends, the UART when the host wrote it
 *             (the bench's behaviour before line models; the default)
 *   ftdi      an FTDI chip (FT232R/FT232B, FTDI AN232B-04 "Data Throughput, Latency and Handshaking"): bytes
 *             from the UART wait in the chip until 62 of them fill a 64-byte USB packet (2 status bytes
 *             lead every packet) or the latency timer (default 16 ms, 1..255 ms; ftdi:latency=MS) expires;
 *             the timer restarts with every packet sent, and when it expires with no data the chip sends the
 *             2 status bytes alone, so idle it runs as a steady grid; a packet reaches the host at the next
 *             1 ms full-speed USB frame
 *   cdc-16u2  the Arduino Mega 2560's ATmega16U2 running Arduino's USB-serial firmware (LUFA CDC): bytes
 *             from the UART wait in a 128-byte ring until its Timer0 overflows (clk/256 of 16 MHz: every
 *             65536 cycles, 4.096 ms, free-running) or more than 96 are buffered, then all go into the IN
 *             endpoint, which reaches the host at the next 1 ms frame
 *
 * Host to node, both adapters: the host's write reaches the chip in a USB OUT transfer, scheduled at the
 * earliest in the next 1 ms frame; a full-speed frame carries up to 19 bulk packets of 64 bytes (1216 bytes,
 * more than a 2 Mbaud UART sends in 1 ms), so the packet size never holds a byte back and is not modelled.
 *
 * Not modelled: the chips' own crystals (the adapter runs on global time), the host controller's own
 * scheduling inside a frame (a packet is delivered at the frame's start), the 16U2's main-loop time (a few
 * us), the endpoint's one-packet bank at more than 64 bytes a flush (all of a flush goes in one frame).
 */
#ifndef MMBENCH_UART_USB_H
#define MMBENCH_UART_USB_H

#include <stdint.h>

enum usb_kind { USB_IDEAL, USB_FTDI, USB_CDC16U2 };

/* One adapter's parameters, in global cycles. */
struct usb_params {
    enum usb_kind kind;
    uint64_t frame;      /* a full-speed USB frame: 1 ms */
    uint64_t period;     /* ftdi: the latency timer; cdc-16u2: Timer0's overflow period */
    uint32_t fill;       /* ftdi: data bytes that fill a packet (62); cdc-16u2: buffered bytes that flush (97) */
    uint32_t latency_ms; /* ftdi: the latency timer as set (ms), for the status */
};

/* The node-to-host side's state: which bytes since the last packet wait, and when the chip next sends. */
struct usb_up {
    uint64_t last_in;   /* the latest byte's arrival at the chip: arrivals never go back */
    uint64_t next_tick; /* ftdi: the latency timer's next expiry; cdc-16u2: Timer0's next overflow */
    uint32_t pending;   /* bytes in the chip since its last packet */
    uint64_t packets;   /* packets sent with data (counted when their first byte arrives) */
    uint64_t fills;     /* of them, sent because they were full (ftdi) or nearly full (cdc-16u2) */
};

/* Parses MODEL[:k=v[,k=v]] (ideal, ftdi[:latency=MS], cdc-16u2) into *p; 0, or -1 with a reason in err. */
int usb_parse(const char *spec, struct usb_params *p, char *err, unsigned errlen);
const char *usb_kind_name(enum usb_kind kind);
void usb_up_init(const struct usb_params *p, struct usb_up *s);

/* A byte from the node's UART reaches the chip at global cycle `at`. Returns when the host has it, if no
 * later byte changes that. A byte that completes a full packet moves the bytes waiting with it earlier:
 * then *moved_from is the moment those earlier bytes had (they now go with this one), else 0. */
uint64_t usb_up_byte(const struct usb_params *p, struct usb_up *s, uint64_t at, uint64_t *moved_from);

/* A byte the host wrote at global cycle `at`: when it reaches the chip's UART side. */
uint64_t usb_down_byte(const struct usb_params *p, uint64_t at);

#endif

/*
 * Footprint program for the 8051 (SDCC, mcs51 small model): the profiler's use of the protocol
 * code, reduced to the serial port. It is linked twice, with and without the protocol calls
 * (-DMM_FOOTPRINT_BASELINE), so that `make mcs51` can tell what the protocol code adds. It is
 * never run.
 */
#include <8051.h>
#include <stdint.h>

#include "mmproto.h"

/* HELLO of the 8051 profiler, kept in code memory: the encoder reads it through a generic pointer. */
static const uint8_t MM_ROM hello_body[MM_HELLO_LEN] = {
    MM_PROTO_VERSION, MM_NODE_PROFILER, 0x00, 0x01,  /* fw 1.0 */
    0x00, 0xC0, 0xA8, 0x00,                          /* cpu_hz 11059200 */
    0x00, 0x10, 0x0E, 0x00,                          /* timer_hz 921600 */
    0x00, 0x00, 0x01, 0x00,                          /* tick_counts 65536 */
    0x80, 0x25, 0x00, 0x00,                          /* baud 9600 */
    MM_HELLO_FLAG_POLLED | MM_HELLO_FLAG_8051,
};

#ifndef MM_FOOTPRINT_BASELINE
static struct mm_enc enc;
static struct mm_dec dec;
#endif
/* Written by the serial ISR, read by main: volatile so main re-reads them. */
static volatile uint8_t got_type;
static volatile uint8_t fire_stamp;

void serial_isr(void) __interrupt(4)
{
    if (RI) {
        uint8_t byte = SBUF;
        RI = 0;
#ifndef MM_FOOTPRINT_BASELINE
        if (mm_dec_at_frame_start(&dec))
            fire_stamp = TL0; /* first byte of a frame: what FIRE timestamps */
        if (mm_dec_push(&dec, byte) == MM_DEC_FRAME &&
            mm_msg_check(dec.buf, mm_dec_payload_len(&dec)) == MM_MSG_OK)
            got_type = dec.buf[MM_HDR_TYPE];
#else
        fire_stamp = TL0;
        got_type = byte;
#endif
    }
    if (TI) {
        int16_t b;
        TI = 0;
#ifndef MM_FOOTPRINT_BASELINE
        b = mm_enc_next(&enc);
#else
        b = hello_body[got_type & 15];
#endif
        if (b >= 0)
            SBUF = (uint8_t)b;
    }
}

void main(void)
{
#ifndef MM_FOOTPRINT_BASELINE
    mm_dec_init(&dec);
    mm_enc_start(&enc, MM_T_HELLO, 0, hello_body, MM_HELLO_LEN);
    SBUF = (uint8_t)mm_enc_next(&enc); /* the ISR sends the rest */
#else
    SBUF = hello_body[0];
#endif
    ES = 1;
    EA = 1;
    for (;;) {
        if (got_type != 0)
            P1 = got_type ^ fire_stamp;
    }
}

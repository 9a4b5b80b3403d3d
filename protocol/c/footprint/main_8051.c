/*
 * Footprint program for the 8051 (SDCC, mcs51 small model): the protocol as the 8051 profiler uses
 * it, reduced to the serial port. Everything runs in a polled foreground loop (no interrupt, so no
 * MM_ISR_SAFE and SDCC may overlay the protocol functions' locals), with the stepped encoder API
 * (MM_ENC_STEP_ONLY: mm_enc_begin, one mm_enc_crc_step per pass, then mm_enc_step), the body bytes
 * from a function of the program's (MM_ENC_BODY_FN with a 1-byte selector, MM_ENC_BODY_T = uint8_t)
 * and no mm_crc16_update (MM_CRC_SHIFT8_ONLY): the flags `make mcs51` builds the modules with, the
 * same as profiler-fw's 8051 build. It is linked twice, with and without the protocol calls
 * (-DMM_FOOTPRINT_BASELINE), so that `make mcs51` can tell what the protocol code adds. It is never
 * run.
 */
#include <8051.h>
#include <stdint.h>

#include "mmproto.h"

/* HELLO of the 8051 profiler, kept in code memory. */
static const uint8_t MM_ROM hello_body[MM_HELLO_LEN] = {
    MM_PROTO_VERSION, MM_NODE_PROFILER, 0x00, 0x01,  /* fw 1.0 */
    0x00, 0xC0, 0xA8, 0x00,                          /* cpu_hz 11059200 */
    0x00, 0x10, 0x0E, 0x00,                          /* timer_hz 921600 */
    0x00, 0x00, 0x01, 0x00,                          /* tick_counts 65536 */
    0x80, 0x25, 0x00, 0x00,                          /* baud 9600 */
    MM_HELLO_FLAG_POLLED | MM_HELLO_FLAG_8051,
};

/* The encoder's body function (MM_ENC_BODY_FN): selector 0 = HELLO. Part of the program in both
 * links (the baseline reads the same bytes). */
uint8_t fp_body(uint8_t sel, uint8_t k)
{
    return (uint8_t)(hello_body[k] + sel);
}

#ifndef MM_FOOTPRINT_BASELINE
static struct mm_enc MM_RAM enc;
static struct mm_dec MM_RAM dec;
#endif
static uint8_t got_type;
static uint8_t fire_stamp;
static uint8_t seq;
static __bit crc_steps;

void main(void)
{
    uint8_t byte;
#ifndef MM_FOOTPRINT_BASELINE
    int16_t b;

    mm_dec_init(&dec);
    mm_enc_begin(&enc, MM_T_HELLO, seq++, 0, MM_HELLO_LEN);
#else
    uint8_t k = 0;
#endif
    crc_steps = 1;
    for (;;) {
        if (RI) {
            byte = SBUF;
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
        } else if (crc_steps) {
#ifndef MM_FOOTPRINT_BASELINE
            if (!mm_enc_crc_step(&enc)) {
                crc_steps = 0;
                TI = 1;
            }
#else
            crc_steps = 0;
            TI = 1;
#endif
        } else if (TI) {
#ifndef MM_FOOTPRINT_BASELINE
            b = mm_enc_step(&enc);
            if (b >= 0) {
                TI = 0;
                SBUF = (uint8_t)b;
            } else if (b == -1) {
                TI = 0;
            }
#else
            TI = 0;
            SBUF = fp_body(0, k++);
#endif
        }
        if (got_type == MM_T_QUERY) {
            got_type = 0;
#ifndef MM_FOOTPRINT_BASELINE
            mm_enc_begin(&enc, MM_T_HELLO, seq++, 0, MM_HELLO_LEN);
#else
            k = seq++;
#endif
            crc_steps = 1;
        }
        P1 = fire_stamp;
    }
}

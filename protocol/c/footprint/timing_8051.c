/*
 * Cycle counts of the protocol calls on the 8051, measured with Timer 0 (one count per machine
 * cycle) in the ucsim simulator: `make mcs51-timing`. Worst cases are what matter for the serial
 * ISR, so the frames are chosen for long zero-free COBS blocks. Results go to idata, which
 * mcs51_timing.sh dumps.
 */
#include <8051.h>
#include <stdint.h>

#include "mmproto.h"

/* The longest zero-free blocks the profiler can send: every byte non-zero. */
static const uint8_t MM_ROM counters_body[MM_COUNTERS_LEN] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
};
static uint8_t result_body[MM_RESULT_LEN] = { 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };

static struct mm_enc enc;
static struct mm_dec dec;

/* Read by the simulator script only. */
__idata uint16_t results[8];

static void start(void)
{
    TR0 = 0;
    TH0 = 0;
    TL0 = 0;
    TR0 = 1;
}

static uint16_t stop(void)
{
    TR0 = 0;
    return (uint16_t)(((uint16_t)TH0 << 8) | TL0);
}

/* Worst single mm_enc_next of a whole frame. */
static uint16_t worst_next(void)
{
    uint16_t worst = 0, t;
    int16_t b;

    do {
        start();
        b = mm_enc_next(&enc);
        t = stop();
        if (t > worst)
            worst = t;
    } while (b >= 0);
    return worst;
}

void main(void)
{
    uint16_t worst = 0, t, base;
    uint8_t k, r = MM_DEC_BUSY;

    TMOD = 0x01;
    start();
    base = stop(); /* the cost of start/stop itself, subtracted below */

    start();
    mm_enc_start(&enc, MM_T_COUNTERS, 0x55, counters_body, MM_COUNTERS_LEN);
    results[0] = stop() - base;
    results[1] = worst_next() - base;
    start();
    mm_enc_start(&enc, MM_T_RESULT, 0x55, result_body, MM_RESULT_LEN);
    results[2] = stop() - base;
    results[3] = worst_next() - base;

    /* A FIRE frame (the longest the profiler takes), byte by byte. */
    mm_enc_start(&enc, MM_T_FIRE, 0x55, result_body, MM_FIRE_LEN);
    mm_dec_init(&dec);
    do {
        int16_t b = mm_enc_next(&enc);
        if (b < 0)
            break;
        start();
        r = mm_dec_push(&dec, (uint8_t)b);
        t = stop() - base;
        if (b != 0 && t > worst)
            worst = t;
        if (b == 0)
            results[5] = t;
    } while (1);
    results[4] = worst;
    start();
    k = mm_msg_check(dec.buf, mm_dec_payload_len(&dec));
    results[6] = stop() - base;
    results[7] = (uint16_t)((r == MM_DEC_FRAME && k == MM_MSG_OK) ? 0x600D : 0xBAD);
    P1 = 0xAA; /* done */
    for (;;)
        ;
}

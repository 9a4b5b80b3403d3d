/*
 * Streaming frame encoder (SPEC.md section 2): one wire byte per call, no output buffer, so the
 * UART transmit interrupt can drive it and the payload never has to be assembled in RAM.
 *
 * It walks the frame F = [type, seq, body..., crc_lo, crc_hi] (indices 0 .. len+3), preceded by a
 * virtual zero at index -1 (pos 0xFF) that is never sent: COBS splits the data at zeros, and starting
 * "just after a zero" makes the first code byte the same case as every later one. Each code byte is
 * found by scanning ahead to the next zero. Frames are shorter than 254 bytes, so no block reaches
 * 254 data bytes and the 0xFF code (a block without a zero after it) never occurs here.
 */
#include "mmproto.h"

#if defined(__SDCC_mcs51) && defined(MM_ISR_SAFE)
#pragma nooverlay /* mm_enc_next runs in the UART ISR: see mmproto.h */
#endif

#define BEFORE 0xFFu /* pos of the virtual leading zero */
#define DONE 0xFEu   /* pos after the delimiter; never an index (len + 4 <= 36) */

/* Body bytes come from e->body, or from a function of the build's (MM_ENC_BODY_FN(body, k): body
 * byte k), for a node that generates its bodies instead of keeping them in RAM (the 8051 profiler). */
#ifdef MM_ENC_BODY_FN
uint8_t MM_ENC_BODY_FN(MM_ENC_BODY_T body, uint8_t k);
#if !defined(MM_ENC_STEP_ONLY)
#error "MM_ENC_BODY_FN needs MM_ENC_STEP_ONLY"
#endif
#endif

/* F[i]; type and seq are hc[0..1], the CRC hc[2..3]. */
static uint8_t fbyte(const struct mm_enc MM_RAM *e, uint8_t i)
{
    if (i < 2)
        return e->hc[i];
    if ((uint8_t)(i - 2) < e->len)
#ifdef MM_ENC_BODY_FN
        return MM_ENC_BODY_FN(e->body, (uint8_t)(i - 2));
#else
        return e->body[i - 2];
#endif
    return e->hc[i - e->len];
}

#ifndef MM_ENC_STEP_ONLY
/* Index of the first zero of F at or after i, or len + 4 if there is none. This loop runs in the
 * ISR, so the body (the long part, behind a generic pointer) gets a loop of its own instead of a
 * call to fbyte per byte: on the 8051 that more than halves the worst case. */
static uint8_t next_zero(const struct mm_enc MM_RAM *e, uint8_t i)
{
    const uint8_t *p;
    uint8_t k;

    for (; i != (uint8_t)(e->len + 4); i++) {
        k = (uint8_t)(i - 2);
        if (k < e->len) {
            p = e->body + k;
            k = (uint8_t)(e->len - k);
            do {
                if (*p++ == 0)
                    return i;
                i++;
            } while (--k != 0);
        }
        if (fbyte(e, i) == 0)
            break;
    }
    return i;
}

#endif

void mm_enc_begin(struct mm_enc MM_RAM *e, uint8_t type, uint8_t seq, MM_ENC_BODY_T body,
                  uint8_t body_len)
{
    e->hc[0] = type;
    e->hc[1] = seq;
    e->body = body;
    e->len = body_len;
    /* Until the CRC is done, pos is the next byte to fold in and hc[2..3] the running CRC (fbyte
     * never reads hc[2..3] below index len + 2). */
    e->hc[2] = (uint8_t)MM_CRC_INIT;
    e->hc[3] = (uint8_t)(MM_CRC_INIT >> 8);
    e->pos = 0;
    e->run = 0;
}

uint8_t mm_enc_crc_step(struct mm_enc MM_RAM *e)
{
    uint8_t i = e->pos;
    uint16_t crc = mm_crc16_shift8((uint16_t)((uint16_t)(uint8_t)(e->hc[3] ^ fbyte(e, i)) << 8) |
                                   e->hc[2]);

    e->hc[2] = (uint8_t)crc;
    e->hc[3] = (uint8_t)(crc >> 8);
    i++;
    if (i == (uint8_t)(e->len + 2)) {
        e->pos = BEFORE;
        return 0;
    }
    e->pos = i;
    return 1;
}

#ifndef MM_ENC_STEP_ONLY
void mm_enc_start(struct mm_enc MM_RAM *e, uint8_t type, uint8_t seq, const uint8_t *body,
                  uint8_t body_len)
{
    mm_enc_begin(e, type, seq, body, body_len);
    while (mm_enc_crc_step(e))
        ;
}

int16_t mm_enc_next(struct mm_enc MM_RAM *e)
{
    uint8_t pos = e->pos;

    if (e->run != 0) {
        e->run--;
        e->pos = (uint8_t)(pos + 1);
        return fbyte(e, pos);
    }
    if (pos == DONE)
        return -1;
    /* F[pos] is the zero that ended the previous block (or the virtual one): skip it. */
    pos++;
    if (pos == (uint8_t)(e->len + 5)) {
        e->pos = DONE; /* the last block ended at the end of F */
        return 0;
    }
    e->pos = pos;
    e->run = (uint8_t)(next_zero(e, pos) - pos);
    return (int16_t)(e->run + 1);
}
#endif

#ifndef MM_ENC_NO_STEP
/* run while a code byte is being looked for: SCAN | bytes scanned so far (a block has < 0x80). */
#define SCAN 0x80u

int16_t mm_enc_step(struct mm_enc MM_RAM *e)
{
    uint8_t pos = e->pos;
    uint8_t run = e->run;

    if (run & SCAN) {
        run &= (uint8_t)~SCAN;
        pos = (uint8_t)(pos + run); /* the index to look at */
        if (pos == (uint8_t)(e->len + 4) || fbyte(e, pos) == 0) {
            e->run = run;
            return (int16_t)(run + 1);
        }
        e->run = (uint8_t)(run + 1u + SCAN);
        return MM_ENC_AGAIN;
    }
    if (run != 0) {
        e->run = (uint8_t)(run - 1);
        e->pos = (uint8_t)(pos + 1);
        return fbyte(e, pos);
    }
    if (pos == DONE)
        return -1;
    pos++;
    if (pos == (uint8_t)(e->len + 5)) {
        e->pos = DONE;
        return 0;
    }
    e->pos = pos;
    e->run = SCAN;
    return MM_ENC_AGAIN;
}
#endif

/*
 * Streaming frame decoder (SPEC.md section 6): one byte per call, fixed buffer, constant work per
 * byte (the CRC is kept up to date as bytes arrive, so the delimiter costs no more than any other
 * byte; a receive ISR can call it).
 *
 * Why a single counter suffices: every COBS byte after the first adds exactly one decoded byte (a
 * data byte, or the zero implied before a new block), so while the frame fits, the decoded length is
 * n - 1 and "the encoded frame is too long" is exactly "the next byte has no room in buf". The one
 * exception, a code byte after a 0xFF block (no implied zero), cannot happen within the limit: a 0xFF
 * block ends at encoded byte 255, far beyond MM_DEC_MAX_ENCODED (<= 37). A 0xFF code inside the
 * limit is simply a block announcing 254 bytes, which the delimiter cuts short: bad_cobs.
 */
#include "mmproto.h"

#if defined(__SDCC_mcs51) && defined(MM_ISR_SAFE)
#pragma nooverlay /* mm_dec_push may run in the UART ISR: see mmproto.h */
#endif

#define SKIP 0xFFu /* n while discarding a too-long frame; MM_DEC_MAX_ENCODED < 0xFF */

void mm_dec_init(struct mm_dec MM_RAM *d)
{
    /* left and crc are set by the first byte of each frame. */
    d->n = 0;
}

uint8_t mm_cobs_push(struct mm_dec MM_RAM *d, uint8_t byte)
{
    uint8_t n = d->n;

    if (byte == 0) {
        d->n = 0;
        if (n == 0)
            return MM_DEC_BUSY; /* empty frame: ignored (section 6) */
        if (n == SKIP)
            return MM_DEC_TOO_LONG;
        if (d->left != 0)
            return MM_DEC_BAD_COBS;
        d->left = (uint8_t)(n - 1);
        return MM_DEC_FRAME;
    }
    if (n == SKIP)
        return MM_DEC_BUSY;
    if (n == 0) {
        d->left = (uint8_t)(byte - 1);
        d->n = 1;
        d->crc = MM_CRC_INIT;
        return MM_DEC_BUSY;
    }
    if (n > MM_DEC_CAPACITY) {
        /* Encoded byte MM_DEC_MAX_ENCODED + 1: too long. buf is not touched again until the
         * delimiter. */
        d->n = SKIP;
        return MM_DEC_BUSY;
    }
    if (d->left == 0) {
        d->left = (uint8_t)(byte - 1); /* a code byte: the block before it ended in a zero */
        byte = 0;
    } else {
        d->left--;
    }
    d->buf[n - 1] = byte;
    d->n = (uint8_t)(n + 1);
    /* The byte two places back can no longer be part of the trailing CRC: it enters the running
     * CRC now. (Only mm_dec_push looks at the CRC, but keeping it here costs less code than
     * tracking from outside which pushes stored a byte.) */
    if (n >= 3)
        d->crc = mm_crc16_shift8(d->crc ^ (uint16_t)((uint16_t)d->buf[n - 3] << 8));
    return MM_DEC_BUSY;
}

uint8_t mm_dec_push(struct mm_dec MM_RAM *d, uint8_t byte)
{
    uint8_t n;
    uint8_t r = mm_cobs_push(d, byte);

    if (r != MM_DEC_FRAME)
        return r;
    n = d->left; /* decoded length */
    if (n < MM_MIN_FRAME)
        return MM_DEC_TOO_SHORT;
    n -= MM_CRC_LEN;
    if (d->buf[n] != (uint8_t)d->crc || d->buf[n + 1] != (uint8_t)(d->crc >> 8))
        return MM_DEC_BAD_CRC; /* (compared byte by byte: no 16-bit temporary on the 8051) */
    d->left = n;
    return MM_DEC_FRAME;
}

/* CRC-16/IBM-3740 (SPEC.md section 3), a byte at a time without a table (a 512-byte table does not
 * fit the 8051): the well-known shift/xor form of the 0x1021 polynomial, in 8-bit operations only,
 * so that one byte costs a few dozen machine cycles on the 8051 instead of about 260 bit by bit. */
#include "mmproto.h"

#if defined(__SDCC_mcs51) && defined(MM_ISR_SAFE)
#pragma nooverlay /* may run in an ISR: see mmproto.h */
#endif

uint16_t mm_crc16_shift8(uint16_t x)
{
    /* With h = the high byte of x (CRC high byte ^ data byte) and t = h ^ (h >> 4), the 8 shifts of
     * the bitwise form add up to (x << 8) ^ (t << 12) ^ (t << 5) ^ t (16 bits). */
    uint8_t t = (uint8_t)(x >> 8);
    uint8_t lo = (uint8_t)x;

    t ^= (uint8_t)(t >> 4);
    return (uint16_t)((uint16_t)(uint8_t)(lo ^ (uint8_t)(t << 4) ^ (uint8_t)(t >> 3)) << 8) |
           (uint8_t)((uint8_t)(t << 5) ^ t);
}

#ifndef MM_CRC_SHIFT8_ONLY
uint16_t mm_crc16_update(uint16_t crc, uint8_t byte)
{
    return mm_crc16_shift8(crc ^ (uint16_t)((uint16_t)byte << 8));
}
#endif

/* CRC-16/IBM-3740 (SPEC.md section 3), bit by bit: a 512-byte table does not fit the 8051. */
#include "mmproto.h"

#if defined(__SDCC_mcs51)
#pragma nooverlay /* may run in an ISR: see mmproto.h */
#endif

uint16_t mm_crc16_shift8(uint16_t x)
{
    uint8_t i;

    for (i = 8; i != 0; i--) {
        if (x & 0x8000u)
            x = (uint16_t)(x << 1) ^ 0x1021u;
        else
            x = (uint16_t)(x << 1);
    }
    return x;
}

uint16_t mm_crc16_update(uint16_t crc, uint8_t byte)
{
    return mm_crc16_shift8(crc ^ (uint16_t)((uint16_t)byte << 8));
}

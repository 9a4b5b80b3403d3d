/* Little-endian fields (SPEC.md section 2). Kept out of the other modules: SDCC links whole
 * modules, and a node that never reads a u32 should not pay for these. */
#include "mmproto.h"

#if defined(__SDCC_mcs51) && defined(MM_ISR_SAFE)
#pragma nooverlay /* may run in an ISR: see mmproto.h */
#endif

void mm_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void mm_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

uint16_t mm_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)((uint16_t)p[1] << 8));
}

uint32_t mm_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

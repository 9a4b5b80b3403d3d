/* BAUD (SPEC.md 0x06): whether a UART whose rate is clock / divisor can make a rate asked for, within the
 * 2.5 % the protocol allows. Shared by every board with such a UART (the ATmega2560's USART in double
 * speed: clock F_CPU / 8, divisor UBRR0 + 1). A module of its own because SDCC links whole modules: the
 * 8051, whose Timer1 makes only exact rates, does not pay for the 32-bit divisions. */
#include "mmproto.h"

uint16_t mm_baud_div(uint32_t clock_hz, uint16_t hundreds, uint16_t max_div)
{
    uint32_t baud = (uint32_t)hundreds * 100u;
    uint32_t div, made;

    if (baud == 0)
        return 0;
    div = (clock_hz + baud / 2u) / baud; /* the nearest divisor */
    if (div == 0 || div > max_div)
        return 0;
    made = clock_hz / div;
    if ((made > baud ? made - baud : baud - made) * 40u > baud) /* more than 2.5 % off */
        return 0;
    return (uint16_t)div;
}

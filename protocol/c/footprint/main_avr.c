/*
 * Footprint program for the ATmega2560 (avr-gcc): the executor's use of the protocol code, reduced
 * to USART0. `make avr` links it to report sizes; it is never run.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <stdint.h>

#include "mmproto.h"

static const uint8_t hello_body[MM_HELLO_LEN] = {
    MM_PROTO_VERSION, MM_NODE_EXECUTOR, 0x00, 0x01,  /* fw 1.0 */
    0x00, 0x24, 0xF4, 0x00,                          /* cpu_hz 16000000 */
    0x80, 0x84, 0x1E, 0x00,                          /* timer_hz 2000000 */
    0x00, 0x00, 0x00, 0x00,                          /* tick_counts */
    0x00, 0xC2, 0x01, 0x00,                          /* baud 115200 */
    0,
};

struct mm_enc enc;
struct mm_dec dec;
/* Written by the receive ISR, read by main: volatile so main re-reads it. */
static volatile uint8_t got_type;

ISR(USART0_RX_vect)
{
    if (mm_dec_push(&dec, UDR0) == MM_DEC_FRAME &&
        mm_msg_check(dec.buf, mm_dec_payload_len(&dec)) == MM_MSG_OK)
        got_type = dec.buf[MM_HDR_TYPE];
}

ISR(USART0_UDRE_vect)
{
    int16_t b = mm_enc_next(&enc);
    if (b >= 0)
        UDR0 = (uint8_t)b;
    else
        UCSR0B &= (uint8_t)~(1 << UDRIE0);
}

int main(void)
{
    mm_dec_init(&dec);
    mm_enc_start(&enc, MM_T_HELLO, 0, hello_body, MM_HELLO_LEN);
    UCSR0B = (1 << RXEN0) | (1 << TXEN0) | (1 << RXCIE0) | (1 << UDRIE0);
    sei();
    for (;;) {
        if (got_type != 0)
            PORTB = got_type;
    }
}

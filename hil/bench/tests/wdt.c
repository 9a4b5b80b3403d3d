/*
 * TEST IMAGE, not the product: the watchdog on the bench (hil/tests/test_watchdog.py). At start it
 * takes MCUSR (the reset cause) in .init3, as avr-libc advises, clears it and stops the watchdog
 * (which stays on after a watchdog reset), then reports "MCUSR xx\n" on USART0 (9600 baud, 8N1,
 * U2X), enables the watchdog at 15 ms and stops feeding it, so it bites ~16 ms later. A byte 'F'
 * from the host makes it feed the watchdog from then on (no more resets).
 */
#include <avr/io.h>
#include <avr/wdt.h>
#include <stdint.h>

uint8_t mcusr_mirror __attribute__((section(".noinit")));

void get_mcusr(void) __attribute__((naked, used, section(".init3")));
void get_mcusr(void)
{
    mcusr_mirror = MCUSR;
    MCUSR = 0;
    wdt_disable();
}

static void put(uint8_t c)
{
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    UDR0 = c;
}

static void hex(uint8_t v)
{
    static const char d[] = "0123456789abcdef";
    put((uint8_t)d[v >> 4]);
    put((uint8_t)d[v & 15]);
}

int main(void)
{
    const char *s = "MCUSR ";
    uint8_t feeding = 0;
    UBRR0 = 207;
    UCSR0A = _BV(U2X0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(TXEN0) | _BV(RXEN0);
    while (*s)
        put((uint8_t)*s++);
    hex(mcusr_mirror);
    put('\n');
    wdt_enable(WDTO_15MS);
    for (;;) {
        if (UCSR0A & _BV(RXC0)) {
            if (UDR0 == 'F')
                feeding = 1;
        }
        if (feeding)
            wdt_reset();
    }
}

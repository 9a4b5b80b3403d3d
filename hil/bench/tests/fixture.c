/*
 * TEST FIXTURE, not the product: a tiny ATmega2560 image for testing the virtual bench without the
 * real firmware. The same image goes into both slots (profiler and executor). Timer5 runs free at
 * the CPU clock from the same instruction on both cores, so their counts can be compared.
 *
 * Commands (one byte on USART0, 9600 baud, 8N1, U2X):
 *   H   reply "FIXTURE\n"
 *   S   40 events: PORTC = id | strobe (PC3 toggled), each followed by "T tttt\n", the TCNT5 read
 *       one cycle after the OUT (inline assembly, so the distance is fixed)
 *   A   PORTA = 1..20, a few hundred cycles apart (the executor slot reports "K vv\n" from PCINT2)
 *   W/w busy mode on/off: the main loop spins on calls instead of sleeping
 *   R   count mode: the bytes that follow are counted and timestamped (32-bit Timer5) until 50 ms of
 *       silence, then "R nnnn ffffffff llllllll\n" (count, first and last receive interrupt)
 *   B   burst: switch to 1 Mbaud (UBRR 1, U2X), wait for one byte at that rate (the host switched its
 *       port: the bench drops bytes between ends at different rates, docs/bench.md "Baud rate"), then
 *       100000 bytes 0x00, 0x01, ... 0xFF, 0x00, ... at 1 Mbaud, then back to 9600
 * Always: each input-capture edge on PL1 (ICP5) gives "C iiii d\n" (ICR5, PINC & 7); at boot "BOOT\n".
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#define UBRR_9600_U2X 207

static volatile uint16_t t5_hi;
static volatile uint8_t txbuf[256];
static volatile uint8_t tx_head, tx_tail;
static volatile uint8_t cmdbuf[16];
static volatile uint8_t cmd_head, cmd_tail;
static volatile uint16_t caps[32];
static volatile uint8_t capid[32];
static volatile uint8_t cap_head, cap_tail;
static volatile uint8_t kvals[32];
static volatile uint8_t k_head, k_tail;
static volatile uint8_t counting, busy;
static volatile uint16_t rx_count;
static volatile uint32_t rx_first, rx_last;

static uint32_t now32_locked(void)
{
    uint16_t lo = TCNT5;
    uint16_t hi = t5_hi;
    if ((TIFR5 & _BV(TOV5)) && lo < 0x8000u)
        hi++;
    return ((uint32_t)hi << 16) | lo;
}

static uint32_t now32(void)
{
    uint32_t t;
    uint8_t s = SREG;
    cli();
    t = now32_locked();
    SREG = s;
    return t;
}

ISR(TIMER5_OVF_vect)
{
    t5_hi++;
}

ISR(TIMER5_CAPT_vect)
{
    uint16_t icr = ICR5;
    uint8_t id = PINC & 7u;
    TCCR5B ^= _BV(ICES5);
    TIFR5 = _BV(ICF5);
    caps[cap_head & 31u] = icr;
    capid[cap_head & 31u] = id;
    cap_head++;
}

ISR(PCINT2_vect)
{
    kvals[k_head & 31u] = PINK;
    k_head++;
}

ISR(USART0_RX_vect)
{
    uint8_t b = UDR0;
    if (counting) {
        uint32_t t = now32_locked();
        if (!rx_count)
            rx_first = t;
        rx_last = t;
        rx_count++;
        return;
    }
    cmdbuf[cmd_head & 15u] = b;
    cmd_head++;
}

ISR(USART0_UDRE_vect)
{
    if (tx_head == tx_tail) {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = txbuf[tx_tail];
    tx_tail++;
}

static void putb(uint8_t b)
{
    while ((uint8_t)(tx_head + 1u) == tx_tail)
        ;
    txbuf[tx_head] = b;
    tx_head++;
    UCSR0B |= _BV(UDRIE0);
}

static void puts_(const char *s)
{
    while (*s)
        putb((uint8_t)*s++);
}

static void puthex(uint32_t v, uint8_t digits)
{
    while (digits--) {
        uint8_t d = (uint8_t)((v >> (4u * digits)) & 0xFu);
        putb((uint8_t)(d < 10 ? '0' + d : 'a' + d - 10));
    }
}

static uint16_t lcg = 12345;
static uint16_t rnd(void)
{
    lcg = (uint16_t)(lcg * 25173u + 13849u);
    return lcg;
}

static void spin(uint16_t n)
{
    volatile uint16_t k;
    for (k = 0; k < n; k++)
        ;
}

static void strobe_test(void)
{
    uint8_t i;
    DDRC = 0x0F;
    for (i = 0; i < 40; i++) {
        uint8_t v = (uint8_t)(((PORTC ^ 0x08u) & 0x08u) | (i & 7u));
        uint16_t t;
        uint8_t nops = (uint8_t)(rnd() & 3u);
        spin((uint16_t)(40u + (rnd() & 0xFFu)));
        while (nops--)
            __asm__ __volatile__("nop");
        cli();
        __asm__ __volatile__("out %[port], %[v]   \n\t"
                             "lds %A[t], %[tl]    \n\t"
                             "lds %B[t], %[th]    \n\t"
                             : [t] "=&r"(t)
                             : [port] "I"(_SFR_IO_ADDR(PORTC)), [v] "r"(v), [tl] "n"(_SFR_MEM_ADDR(TCNT5L)),
                               [th] "n"(_SFR_MEM_ADDR(TCNT5H)));
        sei();
        puts_("T ");
        puthex(t, 4);
        putb('\n');
    }
}

static void porta_walk(void)
{
    uint8_t i;
    for (i = 1; i <= 20; i++) {
        PORTA = i;
        spin((uint16_t)(100u + (rnd() & 0x7Fu)));
    }
}

static void burst(void)
{
    uint32_t i;
    while (tx_head != tx_tail || !(UCSR0A & _BV(TXC0)))
        ;
    UBRR0 = 1; /* 1 Mbaud: the pty must overflow without a long test */
    while (cmd_head == cmd_tail)
        ; /* the host's go, at 1 Mbaud */
    cmd_tail++;
    for (i = 0; i < 100000ul; i++)
        putb((uint8_t)i);
    while (tx_head != tx_tail)
        ;
    UCSR0A |= _BV(TXC0);
    while (!(UCSR0A & _BV(TXC0)))
        ;
    UBRR0 = UBRR_9600_U2X;
}

static void busy_loop(void)
{
    __asm__ __volatile__("rcall 1f \n\t rjmp 2f \n\t 1: ret \n\t 2:");
}

int main(void)
{
    PORTA = 0;
    DDRA = 0xFF;
    PORTC = 0;
    DDRC = 0; /* outputs only once asked to send events: the profiler slot reads PC0..2 */
    DDRL &= (uint8_t)~_BV(PL1);
    TCCR5A = 0;
    TCNT5 = 0;
    TCCR5B = _BV(ICES5) | _BV(CS50); /* clk/1, first capture on a rising edge */
    TIFR5 = _BV(ICF5) | _BV(TOV5);
    TIMSK5 = _BV(ICIE5) | _BV(TOIE5);
    PCMSK2 = 0xFF;
    PCICR |= _BV(PCIE2);
    UCSR0A = _BV(U2X0);
    UBRR0 = UBRR_9600_U2X;
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);
    set_sleep_mode(SLEEP_MODE_IDLE);
    sei();
    puts_("BOOT\n");
    for (;;) {
        uint8_t c = 0, have = 0;
        cli();
        if (cmd_head != cmd_tail) {
            c = cmdbuf[cmd_tail & 15u];
            cmd_tail++;
            have = 1;
        }
        sei();
        if (have) {
            switch (c) {
            case 'H': puts_("FIXTURE\n"); break;
            case 'S': strobe_test(); break;
            case 'A': porta_walk(); break;
            case 'W': busy = 1; break;
            case 'w': busy = 0; break;
            case 'R': rx_count = 0; counting = 1; break;
            case 'B': burst(); break;
            default: break;
            }
        }
        while (cap_tail != cap_head) {
            puts_("C ");
            puthex(caps[cap_tail & 31u], 4);
            putb(' ');
            puthex(capid[cap_tail & 31u], 1);
            putb('\n');
            cap_tail++;
        }
        while (k_tail != k_head) {
            puts_("K ");
            puthex(kvals[k_tail & 31u], 2);
            putb('\n');
            k_tail++;
        }
        if (counting && rx_count) {
            uint32_t last, first;
            uint16_t n;
            cli();
            last = rx_last;
            first = rx_first;
            n = rx_count;
            sei();
            if (now32() - last > 800000ul) { /* 50 ms of silence */
                counting = 0;
                puts_("R ");
                puthex(n, 4);
                putb(' ');
                puthex(first, 8);
                putb(' ');
                puthex(last, 8);
                putb('\n');
            }
        }
        if (busy) {
            busy_loop();
            continue;
        }
        cli();
        if (cmd_head == cmd_tail && cap_tail == cap_head && k_tail == k_head) {
            sleep_enable();
            sei();
            sleep_cpu();
            sleep_disable();
        }
        sei();
    }
}

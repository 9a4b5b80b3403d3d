/*
 * The hardware layer: registers, interrupt handlers and the ex_board.h hooks. Thin on purpose: all
 * decisions are in core/.
 */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "board.h"
#include "ex_board.h"
#include "ex_tc.h"

#ifndef EX_BAUD
#define EX_BAUD 9600UL
#endif
#define BAUD EX_BAUD
#define BAUD_TOL 3
#include <util/setbaud.h>

#define LED_BIT _BV(PB7)
#define EVENT_MASK 0x0Fu /* PC0..PC3 */

/* ---- armed output, shared with the pin-change ISR ---------------------------------------------- */
/* Written only with interrupts disabled (exb_arm, exb_disarm, board_task_dispatch); read by the ISR.
 * Names are used from the ISR's assembly, hence external linkage. */
volatile uint8_t exa_isr;   /* 1: the ISR may write exa_out when PINK == exa_tc8 */
volatile uint8_t exa_task;  /* 1: the timecode task may */
volatile uint8_t exa_tc8;
volatile uint8_t exa_out;
volatile uint8_t exa_fired; /* 1: exa_out was written to PORTC */

void exb_arm(uint8_t path, uint8_t tc8, uint8_t out)
{
    uint8_t s = SREG;
    cli();
    exa_tc8 = tc8;
    exa_out = out;
    exa_fired = 0;
    exa_isr = path == EXB_ARM_ISR;
    exa_task = path == EXB_ARM_TASK;
    SREG = s;
}

uint8_t exb_disarm(void)
{
    uint8_t s = SREG;
    uint8_t f;
    cli();
    f = exa_fired;
    exa_isr = 0;
    exa_task = 0;
    exa_fired = 0;
    SREG = s;
    return f;
}

void exb_output(uint8_t value)
{
    PORTC = value & EVENT_MASK; /* id and strobe in one write: one clean edge for the profiler */
}

void board_task_dispatch(uint8_t port)
{
    cli();
    if (exa_task && port == exa_tc8) {
        PORTC = exa_out;
        exa_task = 0;
        exa_fired = 1;
    }
    sei();
}

/* ---- timecode input ----------------------------------------------------------------------------- */

static TaskHandle_t tc_task, serial_task;
static volatile uint16_t edge_t;    /* Timer1 at the last change of the timecode port */
static volatile uint16_t tick_len;  /* Timer1 counts between the last two changes */
static volatile uint8_t edge_val;

void board_set_tasks(TaskHandle_t timecode, TaskHandle_t serial)
{
    tc_task = timecode;
    serial_task = serial;
}

/* Same rule as ex_tc_read_stable() (read until two consecutive reads agree, at most
 * EX_TC_MAX_READS reads), written inline: through a function pointer it cost 64 cycles (4 us) on the
 * task dispatch path, this costs about 8. */
uint8_t board_read_timecode(void)
{
    uint8_t prev = PINK;
    uint8_t i;

    for (i = 1; i < EX_TC_MAX_READS; i++) {
        uint8_t v = PINK;
        if (v == prev)
            break;
        prev = v;
    }
    return prev;
}

/*
 * Pin-change interrupt, in two halves.
 *
 * The front half is naked assembly so that the dispatch write comes before any of the 20-odd
 * register pushes a C handler that calls the kernel needs: it saves two registers and SREG, compares
 * PINK with the armed timecode byte and, on a match, writes the precomputed byte to PORTC (about 25
 * cycles from the interrupt, ~1.6 us at 16 MHz, plus the wake-up from idle sleep). A half-changed
 * port value never equals the armed byte, and the pin change that completes it raises the interrupt
 * again, so this path needs no double read. Then it restores everything and jumps to the back half,
 * an ordinary C interrupt handler (signal attribute, ends in reti), which notes the edge time for the
 * ACK phase and notifies the timecode task.
 */
void __vector_pcint2_tail(void) __attribute__((signal, used, externally_visible));

ISR(PCINT2_vect, ISR_NAKED)
{
    __asm__ __volatile__(
        "push r24"                  "\n\t"
        "in   r24, __SREG__"        "\n\t"
        "push r24"                  "\n\t"
        "push r25"                  "\n\t"
        "lds  r24, %[pink]"         "\n\t"
        "lds  r25, exa_tc8"         "\n\t"
        "cp   r24, r25"             "\n\t"
        "brne 1f"                   "\n\t"
        "lds  r25, exa_isr"         "\n\t"
        "tst  r25"                  "\n\t"
        "breq 1f"                   "\n\t"
        "lds  r24, exa_out"         "\n\t"
        "out  %[portc], r24"        "\n\t"
        "ldi  r25, 1"               "\n\t"
        "sts  exa_fired, r25"       "\n\t"
        "clr  r25"                  "\n\t"
        "sts  exa_isr, r25"         "\n\t"
        "1:"                        "\n\t"
        "pop  r25"                  "\n\t"
        "pop  r24"                  "\n\t"
        "out  __SREG__, r24"        "\n\t"
        "pop  r24"                  "\n\t"
        "jmp  __vector_pcint2_tail" "\n\t"
        :
        : [pink] "n"(_SFR_MEM_ADDR(PINK)), [portc] "I"(_SFR_IO_ADDR(PORTC)));
}

/*
 * The back half wakes the timecode task at once only for the value that follows the last one it woke
 * it for (+1: the next tick). Any other value is half-changed (the port's bits do not all move at the
 * same instant), a glitch, or a jump; waking the task for it would put a context switch (~40 us with
 * interrupts off) right where the rest of the edge arrives. Instead it starts a settle timer (Timer1
 * compare A, SETTLE_COUNTS later); if the port has not completed a +1 step by then, the timer wakes the
 * task, which reads whatever the port shows and lets the core count the glitch or resynchronise.
 */
#define SETTLE_COUNTS 13u /* 52 us at F_CPU / 64 */
static volatile uint8_t woken_for; /* port value the task was last woken for by an edge */

static void wake_timecode_task(void)
{
    BaseType_t woken = pdFALSE;

    vTaskNotifyGiveFromISR(tc_task, &woken);
    if (woken != pdFALSE)
        portYIELD_FROM_ISR();
}

void __vector_pcint2_tail(void)
{
    uint16_t now = TCNT1;
    uint8_t v = PINK;

    /* The front half may have seen a half-changed port whose last bits arrived while we got here:
     * dispatch now, before the task switch below keeps interrupts off for ~40 us. */
    if (exa_isr && v == exa_tc8) {
        PORTC = exa_out;
        exa_isr = 0;
        exa_fired = 1;
    }
    if (v != edge_val) {
        tick_len = (uint16_t)(now - edge_t);
        edge_t = now;
        edge_val = v;
    }
    if ((uint8_t)(v - woken_for) == 1u) {
        woken_for = v;
        TIMSK1 &= (uint8_t)~_BV(OCIE1A);
        wake_timecode_task();
    } else if (v != woken_for) {
        OCR1A = (uint16_t)(now + SETTLE_COUNTS);
        TIFR1 = _BV(OCF1A);
        TIMSK1 |= _BV(OCIE1A);
    }
}

ISR(TIMER1_COMPA_vect)
{
    TIMSK1 &= (uint8_t)~_BV(OCIE1A);
    woken_for = PINK;
    wake_timecode_task();
}

uint16_t exb_phase(void)
{
    uint16_t now, e, len, el;
    uint8_t s = SREG;

    cli();
    now = TCNT1;
    e = edge_t;
    len = tick_len;
    SREG = s;
    /* Use the measured tick length unless it is implausible (boot, glitches, a skewed edge). */
    if (len < BOARD_TICK_COUNTS / 2u || len > BOARD_TICK_COUNTS + BOARD_TICK_COUNTS / 2u)
        len = BOARD_TICK_COUNTS;
    el = (uint16_t)(now - e);
    if (el >= len)
        return 0xFFFFu;
    return (uint16_t)(((uint32_t)el << 16) / len);
}

/* ---- serial ------------------------------------------------------------------------------------- */

#define RX_SIZE 64u /* powers of two */
#define TX_SIZE 128u
static volatile uint8_t rx_buf[RX_SIZE], tx_buf[TX_SIZE];
static volatile uint8_t rx_head, rx_tail, tx_head, tx_tail;

/* Bytes go into a ring; the serial task is woken only at a frame delimiter or when the ring is half
 * full, so a 13-byte SCHEDULE costs one context switch, not thirteen. A byte that finds the ring full
 * is dropped: the frame it belonged to then fails its CRC and is counted. */
ISR(USART0_RX_vect)
{
    BaseType_t woken = pdFALSE;
    uint8_t b = UDR0;
    uint8_t h = rx_head;
    uint8_t n = (uint8_t)((h + 1u) & (RX_SIZE - 1u));

    if (n != rx_tail) {
        rx_buf[h] = b;
        rx_head = n;
    }
    if (b == 0 || (uint8_t)((n - rx_tail) & (RX_SIZE - 1u)) >= RX_SIZE / 2u) {
        vTaskNotifyGiveFromISR(serial_task, &woken);
        if (woken != pdFALSE)
            portYIELD_FROM_ISR();
    }
}

int16_t board_rx_get(void)
{
    uint8_t t = rx_tail;
    uint8_t b;

    if (t == rx_head)
        return -1;
    b = rx_buf[t];
    rx_tail = (uint8_t)((t + 1u) & (RX_SIZE - 1u));
    return b;
}

ISR(USART0_UDRE_vect)
{
    uint8_t t = tx_tail;

    if (t != tx_head) {
        UDR0 = tx_buf[t];
        tx_tail = (uint8_t)((t + 1u) & (TX_SIZE - 1u));
    } else {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
    }
}

uint8_t exb_tx_room(void)
{
    return (uint8_t)((tx_tail - tx_head - 1u) & (TX_SIZE - 1u));
}

void exb_tx_put(uint8_t byte)
{
    uint8_t h = tx_head;
    tx_buf[h] = byte;
    tx_head = (uint8_t)((h + 1u) & (TX_SIZE - 1u));
}

void exb_tx_kick(void)
{
    uint8_t s = SREG;
    cli();
    UCSR0B |= _BV(UDRIE0);
    SREG = s;
}

/* ---- LED, init ---------------------------------------------------------------------------------- */

void board_led_toggle(void)
{
    PINB = LED_BIT; /* writing 1 to PINx toggles PORTx */
}

void board_led_on(void)
{
    PORTB |= LED_BIT;
}

void board_init(void)
{
    DDRK = 0x00; /* timecode in, no pull-ups: the profiler drives it */
    PORTK = 0x00;
    PORTC = 0x00;
    DDRC = EVENT_MASK;
    DDRB |= LED_BIT;

    TCCR1A = 0;
    TCCR1B = _BV(CS11) | _BV(CS10); /* Timer1 free running, F_CPU / 64 */

    UBRR0H = UBRRH_VALUE;
    UBRR0L = UBRRL_VALUE;
#if USE_2X
    UCSR0A = _BV(U2X0);
#else
    UCSR0A = 0;
#endif
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00); /* 8N1 */
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);

    edge_val = PINK;
    woken_for = edge_val;
    edge_t = TCNT1;
    PCMSK2 = 0xFF;
    PCIFR = _BV(PCIF2);
    PCICR |= _BV(PCIE2);
}

/*
 * One-node simavr harness for the executor image: plays the profiler (drives the timecode on PORTK)
 * and the scheduler's serial line (UART0 RX from a script), records what the executor does.
 *
 *   simavr_harness ELF --cycles N [--start-tc V] [--first C] [--tick C] [--baud B] [--skew C]
 *                  [--script FILE] [--trace C]
 *
 * The image runs unpaced on an ATmega2560 at 16 MHz (chip and clock set here, never from AVR_MCU()
 * metadata in the image). The timecode starts at V (default 0) and steps by one every --tick cycles
 * (default 1137778 = 71.111 ms), first at cycle --first. With --skew C, the low nibble of each new
 * timecode reaches the port C cycles before the high nibble (a port read in between sees a
 * half-changed value; the tick starts with the first change).
 *
 * Script lines (cycle order): "<cycle> <hex byte> <hex byte> ..." bytes to send, each no earlier than
 * <cycle> and no sooner than one character time (10 bit times) after the previous one;
 * "G <cycle> <value>" puts a glitch value on the timecode port (the next tick restores the count).
 *
 * Pin-change interrupts on port K. simavr (1.6 and later) models PCINT only for port B on the
 * ATmega2560 (PCINT0); port K is declared as a plain I/O port, so PCINT16..23 never fire. The harness
 * supplies the missing hardware: it registers vector 11 (PCINT2) with PCICR.PCIE2 as enable and
 * PCIFR.PCIF2 as flag, and raises it whenever it changes a port K pin whose PCMSK2 bit is set, which is
 * what the silicon does (datasheet 15.2). Remove this once simavr declares port K's pcint.
 *
 * Output (stdout), one event per line, with the CPU cycle it happened at:
 *   K <cycle> <value>    timecode port changed (start of the change)
 *   C <cycle> <value>    PORTC changed (event id bits 0..2, strobe bit 3)
 *   T <cycle> <byte>     UART0 transmitted a byte
 *   R <cycle> <byte>     UART0 received a byte (injected)
 *   L <cycle> <level>    status LED (PB7) changed
 *   D <cycle> <value>    the firmware wrote GPIOR2 (free debug marker register, for profiling;
 *                        GPIOR0 holds the executor's ISR-armed flag)
 * With --trace C, stderr gets "P <cycle> <pc, byte address> <I flag>" before every instruction executed
 * in the C cycles after each timecode edge (a cycle profile: tests/cycleprof.py maps it to functions).
 * With HARNESS_TRACE_PC set in the environment, stderr gets the CPU's PC and I flag at every edge.
 *   END <cycle> <state>  end of run, simavr CPU state (cpu_Running = 1, cpu_Sleeping = 2, ...)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avr_ioport.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_irq.h"

#define F_CPU 16000000ul

/* ATmega2560 data-space addresses (iom2560.h) */
#define REG_PCIFR 0x3B
#define REG_PCICR 0x68
#define REG_PCMSK2 0x6D
#define PCINT2_VECTOR 11

struct tx_byte {
    uint64_t at;
    uint8_t b;
    int glitch; /* 1: b is a glitch value for the port, not a UART byte */
};

static avr_t *avr;
static avr_irq_t *pk[8], *uart_in;
static uint8_t tc_now, port_now;
static uint64_t tick_cycles = 1137778, skew;
static uint64_t cycles_per_byte;
static struct tx_byte *script;
static size_t script_n, script_i;
static uint64_t last_rx;
static int pc_last = -1;
static uint64_t trace_window, trace_end; /* --trace: instruction trace after each timecode edge */
static avr_int_vector_t pcint2 = {
    .vector = PCINT2_VECTOR,
    .enable = AVR_IO_REGBIT(REG_PCICR, 2),
    .raised = AVR_IO_REGBIT(REG_PCIFR, 2),
};

static void no_sleep(avr_t *a, avr_cycle_count_t howlong)
{
    (void)a;
    (void)howlong; /* unpaced: never sleep in wall time */
}

static void set_port_bits(uint8_t value, uint8_t mask)
{
    int i;
    for (i = 0; i < 8; i++)
        if (mask & (1u << i)) {
            uint8_t bit = (value >> i) & 1u;
            if (((port_now >> i) & 1u) != bit) {
                avr_raise_irq(pk[i], bit);
                if (avr->data[REG_PCMSK2] & (1u << i))
                    avr_raise_interrupt(avr, &pcint2);
            }
        }
    port_now = (uint8_t)((port_now & ~mask) | (value & mask));
}

static avr_int_vector_t pcint2;
static avr_cycle_count_t finish_skew(avr_t *a, avr_cycle_count_t when, void *param)
{
    if (getenv("HARNESS_TRACE_PC"))
        fprintf(stderr, "skew %llu pc=0x%x I=%d state=%d pend=%d\n", (unsigned long long)when, a->pc, a->sreg[S_I], a->state, pcint2.pending);
    set_port_bits((uint8_t)(uintptr_t)param, 0xF0);
    return 0;
}

static avr_cycle_count_t on_tick(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)param;
    tc_now++;
    printf("K %llu %u\n", (unsigned long long)when, tc_now);
    if (trace_window)
        trace_end = when + trace_window;
    if (getenv("HARNESS_TRACE_PC"))
        fprintf(stderr, "K %u pc=0x%x I=%d state=%d\n", tc_now, a->pc, a->sreg[S_I], a->state);
    if (skew) {
        set_port_bits(tc_now, 0x0F);
        avr_cycle_timer_register(a, skew, finish_skew, (void *)(uintptr_t)tc_now);
    } else {
        set_port_bits(tc_now, 0xFF);
    }
    return when + tick_cycles;
}

static avr_cycle_count_t on_script(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)param;
    while (script_i < script_n && script[script_i].at <= when) {
        struct tx_byte *s = &script[script_i];
        if (s->glitch) {
            printf("G %llu %u\n", (unsigned long long)when, s->b);
            set_port_bits(s->b, 0xFF);
            script_i++;
            continue;
        }
        if (last_rx && when < last_rx + cycles_per_byte)
            return last_rx + cycles_per_byte; /* pace at the baud rate */
        printf("R %llu %u\n", (unsigned long long)when, s->b);
        avr_raise_irq(uart_in, s->b);
        last_rx = when;
        script_i++;
        if (script_i < script_n && !script[script_i].glitch)
            break; /* one byte per character time */
    }
    if (script_i >= script_n)
        return 0;
    {
        uint64_t next = script[script_i].at;
        if (!script[script_i].glitch && last_rx && next < last_rx + cycles_per_byte)
            next = last_rx + cycles_per_byte;
        if (next <= when)
            next = when + 1;
        (void)a;
        return next;
    }
}

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    printf("T %llu %u\n", (unsigned long long)avr->cycle, value & 0xFFu);
}

static void on_portc(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    if ((int)(value & 0xFFu) != pc_last) {
        pc_last = (int)(value & 0xFFu);
        printf("C %llu %u\n", (unsigned long long)avr->cycle, value & 0xFFu);
    }
}

static void on_gpior(struct avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void)param;
    a->data[addr] = v;
    printf("D %llu %u\n", (unsigned long long)a->cycle, v);
}

static void on_led(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    printf("L %llu %u\n", (unsigned long long)avr->cycle, value & 1u);
}

static void load_script(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    size_t cap = 0;

    if (!f) {
        perror(path);
        exit(2);
    }
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end;
        int glitch = 0;
        unsigned long long at;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == 0)
            continue;
        if (*p == 'G') {
            glitch = 1;
            p++;
        }
        at = strtoull(p, &end, 0);
        p = end;
        for (;;) {
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                break;
            p = end;
            if (script_n == cap) {
                cap = cap ? cap * 2 : 1024;
                script = realloc(script, cap * sizeof *script);
                if (!script)
                    exit(2);
            }
            script[script_n].at = at;
            script[script_n].b = (uint8_t)v;
            script[script_n].glitch = glitch;
            script_n++;
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *elf = NULL, *script_path = NULL;
    uint64_t cycles = 0, first = 0;
    unsigned long baud = 9600;
    unsigned start_tc = 0;
    elf_firmware_t fw;
    int i, state;
    uint32_t flags = 0;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
            cycles = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--start-tc") && i + 1 < argc)
            start_tc = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--first") && i + 1 < argc)
            first = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--tick") && i + 1 < argc)
            tick_cycles = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--baud") && i + 1 < argc)
            baud = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--skew") && i + 1 < argc)
            skew = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace_window = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--script") && i + 1 < argc)
            script_path = argv[++i];
        else if (argv[i][0] != '-' && !elf)
            elf = argv[i];
        else {
            fprintf(stderr, "usage: %s ELF --cycles N [--start-tc V] [--first C] [--tick C] [--baud B] "
                            "[--skew C] [--script FILE] [--trace C]\n", argv[0]);
            return 2;
        }
    }
    if (!elf || !cycles) {
        fprintf(stderr, "need an ELF and --cycles\n");
        return 2;
    }
    if (!first)
        first = tick_cycles;
    cycles_per_byte = (10ull * F_CPU + baud - 1) / baud; /* 10 bit times, rounded up: never faster */

    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(elf, &fw) != 0) {
        fprintf(stderr, "cannot read %s\n", elf);
        return 2;
    }
    avr = avr_make_mcu_by_name("atmega2560");
    if (!avr) {
        fprintf(stderr, "simavr has no atmega2560\n");
        return 2;
    }
    avr_init(avr);
    avr->frequency = F_CPU;
    avr->sleep = no_sleep;
    avr->log = 1;
    avr_load_firmware(avr, &fw);
    avr->frequency = F_CPU; /* whatever the ELF says */

    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)(AVR_UART_FLAG_POLL_SLEEP | AVR_UART_FLAG_STDIO);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);

    avr_register_vector(avr, &pcint2);
    avr_register_io_write(avr, 0x4B, on_gpior, NULL); /* GPIOR2 */
    for (i = 0; i < 8; i++)
        pk[i] = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('K'), i);
    uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart_out, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('C'), IOPORT_IRQ_REG_PORT), on_portc, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('B'), 7), on_led, NULL);

    tc_now = (uint8_t)start_tc;
    port_now = 0;
    set_port_bits(tc_now, 0xFF);
    printf("K 0 %u\n", tc_now);
    avr_cycle_timer_register(avr, first, on_tick, NULL);
    if (script_path) {
        load_script(script_path);
        if (script_n)
            avr_cycle_timer_register(avr, script[0].at ? script[0].at : 1, on_script, NULL);
    }

    state = cpu_Running;
    while (avr->cycle < cycles) {
        if (avr->cycle < trace_end)
            fprintf(stderr, "P %llu %x %d\n", (unsigned long long)avr->cycle, avr->pc, avr->sreg[S_I]);
        state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed)
            break;
    }
    printf("END %llu %d\n", (unsigned long long)avr->cycle, state);
    return state == cpu_Crashed ? 1 : 0;
}

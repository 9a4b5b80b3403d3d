/*
 * One-node simavr harness for the AVR profiler image (tests/test_avr.py drives it).
 *
 *   simavr_harness ELF STIMULUS OUT MAX_CYCLES
 *
 * Sets the chip (atmega2560) and clock (16 MHz) itself: the image carries no AVR_MCU() metadata.
 * Runs unpaced: avr->sleep is a no-op, so a sleeping CPU skips straight to its next timer event.
 *
 * STIMULUS lines (cycles are absolute, ascending within each kind):
 *   E <cycle> <id>      put id on PC0..2 and toggle the strobe PL1, in one step (like the executor's
 *                       single port write)
 *   R <cycle> <byte>    deliver one byte (hex) to USART0's receiver
 * OUT lines:
 *   A <cycle> <value>   PORTA changed (the cycle the OUT instruction ran)
 *   U <cycle> <byte>    USART0 transmitted a byte (the cycle UDR0 was written)
 *   E <req> <applied> <id> <level>   a strobe edge applied (applied = avr->cycle when it was)
 *   R <req> <applied> <byte>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_irq.h>
#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>

#define MAX_STIM 200000

struct stim {
    char kind;
    uint64_t cycle;
    unsigned val;
};

static struct stim stims[MAX_STIM];
static size_t n_stim, next_e, next_r;
static FILE *out;
static avr_t *avr;
static avr_irq_t *irq_id[3], *irq_strobe, *irq_uart_in;
static int strobe_level;

static void no_sleep(avr_t *a, avr_cycle_count_t how_long)
{
    (void)a;
    (void)how_long;
}

static void on_porta(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    fprintf(out, "A %llu %u\n", (unsigned long long)avr->cycle, value & 0xFF);
}

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    fprintf(out, "U %llu %02x\n", (unsigned long long)avr->cycle, value & 0xFF);
}

static size_t find_next(size_t from, char kind)
{
    while (from < n_stim && stims[from].kind != kind)
        from++;
    return from;
}

static avr_cycle_count_t fire_e(avr_t *a, avr_cycle_count_t when, void *param);
static avr_cycle_count_t fire_r(avr_t *a, avr_cycle_count_t when, void *param);

static void arm(size_t i, char kind)
{
    if (i >= n_stim)
        return;
    uint64_t when = stims[i].cycle;
    uint64_t rel = when > avr->cycle ? when - avr->cycle : 0;
    avr_cycle_timer_register(avr, rel, kind == 'E' ? fire_e : fire_r, NULL);
}

static avr_cycle_count_t fire_e(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)when;
    (void)param;
    struct stim *s = &stims[next_e];
    for (int b = 0; b < 3; b++)
        avr_raise_irq(irq_id[b], (s->val >> b) & 1);
    strobe_level = !strobe_level;
    avr_raise_irq(irq_strobe, strobe_level);
    fprintf(out, "E %llu %llu %u %d\n", (unsigned long long)s->cycle,
            (unsigned long long)a->cycle, s->val, strobe_level);
    next_e = find_next(next_e + 1, 'E');
    arm(next_e, 'E');
    return 0;
}

static avr_cycle_count_t fire_r(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)when;
    (void)param;
    struct stim *s = &stims[next_r];
    avr_raise_irq(irq_uart_in, s->val & 0xFF);
    fprintf(out, "R %llu %llu %02x\n", (unsigned long long)s->cycle,
            (unsigned long long)a->cycle, s->val & 0xFF);
    next_r = find_next(next_r + 1, 'R');
    arm(next_r, 'R');
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s ELF STIMULUS OUT MAX_CYCLES\n", argv[0]);
        return 2;
    }
    uint64_t max_cycles = strtoull(argv[4], NULL, 0);
    FILE *sf = fopen(argv[2], "r");
    if (!sf) {
        perror(argv[2]);
        return 2;
    }
    char line[128];
    while (fgets(line, sizeof line, sf)) {
        char k;
        unsigned long long c;
        unsigned v;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%c %llu %x", &k, &c, &v) != 3 || (k != 'E' && k != 'R') || n_stim == MAX_STIM) {
            fprintf(stderr, "bad stimulus line: %s", line);
            return 2;
        }
        stims[n_stim].kind = k;
        stims[n_stim].cycle = c;
        stims[n_stim].val = v;
        n_stim++;
    }
    fclose(sf);
    out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        return 2;
    }

    elf_firmware_t fw;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(argv[1], &fw) != 0) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    strcpy(fw.mmcu, "atmega2560");
    fw.frequency = 16000000;
    avr = avr_make_mcu_by_name(fw.mmcu);
    if (!avr) {
        fprintf(stderr, "no atmega2560 core\n");
        return 2;
    }
    avr_init(avr);
    avr->frequency = fw.frequency;
    avr_load_firmware(avr, &fw);
    avr->sleep = no_sleep;
    avr->log = 0;

    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~AVR_UART_FLAG_STDIO;
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);

    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('A'), IOPORT_IRQ_PIN_ALL),
                            on_porta, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            on_uart_out, NULL);
    for (int b = 0; b < 3; b++)
        irq_id[b] = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('C'), b);
    irq_strobe = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('L'), 1);
    irq_uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_raise_irq(irq_strobe, 0);
    for (int b = 0; b < 3; b++)
        avr_raise_irq(irq_id[b], 0);

    next_e = find_next(0, 'E');
    next_r = find_next(0, 'R');
    arm(next_e, 'E');
    arm(next_r, 'R');

    int state = cpu_Running;
    while (avr->cycle < max_cycles) {
        state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed)
            break;
    }
    fprintf(out, "END %llu %d\n", (unsigned long long)avr->cycle, state);
    fclose(out);
    return (state == cpu_Crashed) ? 1 : 0;
}

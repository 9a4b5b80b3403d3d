/* Host board: records what the core asks of the hardware; the test sets the clock. */
#include "pf_core.h"
#include "board_host.h"

uint8_t host_leds;
uint32_t host_led_writes;
uint32_t host_kicks;
uint32_t host_now;       /* counts since the current tick's port change */
uint32_t host_prev_len;  /* counts from the previous tick's port change to the current one */

uint8_t host_reset_cause;

uint8_t board_reset_cause(void) { return host_reset_cause; }
void board_init(void) {}
void board_start(void) {}
void board_leds_write(uint8_t mask) { host_leds = mask; host_led_writes++; }
void board_delay_ms(uint16_t ms) { (void)ms; }
void board_uart_kick_tx(void) { host_kicks++; }
void board_stamp_back(struct pf_stamp *s, pf_count_t back)
{
    if (back <= host_now) {
        s->tc_lo = (uint8_t)(pf_tc_next - 1u);
        s->counts = host_now - back;
    } else {
        s->tc_lo = (uint8_t)(pf_tc_next - 2u);
        s->counts = host_prev_len + host_now - back;
    }
    s->carry = 0;
}
/* a FIRE's first byte: one character at the rate in force before now */
void board_rx_stamp(struct pf_stamp *s) { board_stamp_back(s, PF_CHAR_COUNTS); }
void board_idle(void) {}

#define HOST_DIV(baud) ((PF_CPU_HZ + 4ul * (baud)) / (8ul * (baud))) /* UBRR + 1, nearest */
uint32_t host_char_counts = 80ul * HOST_DIV(PF_BAUD);
uint16_t host_baud_div = (uint16_t)HOST_DIV(PF_BAUD);
uint32_t host_baud_sets;
uint32_t host_baud_set_kicks;

void host_baud_reset(void)
{
    host_baud_div = (uint16_t)HOST_DIV(PF_BAUD);
    host_char_counts = 80ul * host_baud_div;
    host_baud_sets = 0;
}

uint16_t board_baud_check(uint16_t hundreds)
{
    return mm_baud_div(PF_CPU_HZ / 8ul, hundreds, 4096u);
}

void board_baud_set(uint16_t div)
{
    host_baud_div = div;
    host_char_counts = 80ul * div;
    host_baud_sets++;
    host_baud_set_kicks = host_kicks;
}
void board_poll_events(void) {}

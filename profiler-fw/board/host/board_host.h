#ifndef BOARD_HOST_H
#define BOARD_HOST_H
#include <stdint.h>
extern uint8_t host_leds;
extern uint32_t host_led_writes;
extern uint32_t host_kicks;
extern uint32_t host_now;
extern uint32_t host_prev_len;
extern uint8_t host_reset_cause; /* what board_reset_cause() returns */
/* BAUD: the host board makes the AVR's rates (16 MHz, U2X, UBRR = round(F_CPU / (8 * baud)) - 1). */
extern uint32_t host_char_counts; /* PF_CHAR_COUNTS: 10 * 8 * (UBRR + 1) */
extern uint16_t host_baud_div;    /* UBRR + 1 in force */
extern uint32_t host_baud_sets;   /* board_baud_set calls */
extern uint32_t host_baud_set_kicks; /* host_kicks when the last board_baud_set came */
void host_baud_reset(void);       /* back to PF_BAUD, as board_init after reset */
#endif

#ifndef BOARD_HOST_H
#define BOARD_HOST_H
#include <stdint.h>
extern uint8_t host_leds;
extern uint32_t host_led_writes;
extern uint32_t host_kicks;
extern uint32_t host_now;
extern uint32_t host_prev_len;
extern uint8_t host_reset_cause; /* what board_reset_cause() returns */
#endif

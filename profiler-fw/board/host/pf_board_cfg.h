/* Host build of the core for unit tests (core/pf_board.h): plain C, no interrupts (critical sections
 * are no-ops). */
#ifndef PF_BOARD_CFG_H
#define PF_BOARD_CFG_H
#include <stdint.h>
typedef uint32_t pf_count_t;
#define PF_RING_LEN 8
#define PF_FIRE_TAGS 2
#define PF_FLAG volatile uint8_t
#define PF_BAUD 9600ul
#define PF_CPU_HZ 16000000ul
#define PF_TIMER_HZ 16000000ul
#define PF_TICK_COUNTS 1137778ul
#define PF_HELLO_FLAGS (MM_HELLO_FLAG_CAPTURE | MM_HELLO_FLAG_HIST) /* as the AVR */
#define PF_HIST /* core/pf_hist.c, as the AVR; the decoder is full size (MM_DEC_CAPACITY unset) */
/* One character at the rate in force, as on the AVR (16 MHz, U2X): 10 * 8 * (UBRR + 1), 16640 at 9600.
 * board_baud_set changes it (board/host/board.c). */
extern uint32_t host_char_counts;
#define PF_CHAR_COUNTS host_char_counts
#define PF_POST_MS 0
#define PF_NOINLINE __attribute__((noinline)) /* as the AVR */
#define PF_CRIT_ENTER() {
#define PF_CRIT_EXIT() }
#endif

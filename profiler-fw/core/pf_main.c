/* The profiler's main loop, shared by every target. */
#include "pf_core.h"

#if defined(__SDCC_mcs51)
void main(void)
#else
int main(void)
#endif
{
    board_init();
    pf_init();
    pf_led_post();
    board_start();
    for (;;) {
#ifdef PF_WATCHDOG
        board_watchdog_main(); /* AVR: feeds the watchdog if the tick ISR ran since the last feed */
#endif
        board_poll_events(); /* 8051: the paper's foreground poll of P0; AVR: nothing (ISR) */
        if (!pf_service())
            board_idle();    /* AVR: sleep until an interrupt if there is nothing to do */
    }
}

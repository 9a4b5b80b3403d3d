/*
 * Profiler core: timecode state, result ring, transmit scheduling, receive handling, counters.
 * Portable C99: no heap, no recursion, fixed buffers. The board layer calls:
 *   pf_init()                    once, before interrupts are enabled
 *   pf_tick_tx()                 (ISR-driven boards) from the tick ISR, before it writes the port: a
 *                                byte >= 0 is the first of this tick's TIMECODE frame, to be written to
 *                                the idle transmitter right after the port write (then let pf_tx_next
 *                                go on); -1: nothing to write
 *   pf_tick()                    from the tick ISR, right after it wrote pf_tc_next to the port
 *   pf_event(id, level, &stamp)  for each strobe edge (ISR on the AVR, foreground poll on the 8051)
 *   pf_spurious()                for a strobe edge that was not a clean event (dropped: it counts in
 *                                spurious_edges and flags the next result "lost before")
 *   pf_rx_byte(byte)             from the UART receive ISR
 *   pf_tx_next()                 from the UART transmit ISR: next byte, or -1 when the frame is done
 *   pf_service()                 from the main loop: starts the next frame; returns 1 if it did work
 */
#ifndef PF_CORE_H
#define PF_CORE_H

#include <stdint.h>
#include "pf_board.h"
#include "mmproto.h"

#define PF_FW_VERSION 0x0200u /* 2.0: protocol version 6, histograms (PF_HIST boards) */

/* Result record info byte. */
#define PF_INFO_ID 0x07u
#define PF_INFO_STROBE 0x08u /* strobe level after the edge */
#define PF_INFO_FIRE 0x10u   /* source is a FIRE frame */
#define PF_INFO_LOST 0x20u   /* results were lost before this one */
#define PF_INFO_CARRY 0x40u  /* counts + 65536 (only where pf_count_t is 16 bits) */

/* One result record. FIRE tags wait in a separate small FIFO (PF_FIRE_TAGS); an edge's tag is
 * the number of edge results reported before it, counted when it is sent. */
struct pf_result {
    uint8_t tc_lo;  /* the same layout as struct pf_stamp: PF_STAMP_IN_RING stamps into a record */
    uint8_t info;   /* (struct pf_stamp's carry byte: 0 or 1 until pf_event_commit) */
    pf_count_t counts;
};

/* Counter indices: the order of the COUNTERS body (SPEC.md section 5). */
enum {
    PF_C_RX_OK, PF_C_RX_BAD_CRC, PF_C_RX_BAD_COBS, PF_C_RX_TOO_LONG, PF_C_RX_TOO_SHORT,
    PF_C_RX_BAD_MESSAGE,
#ifndef PF_COUNTERS_LIVE
    PF_C_TX_DROPPED, /* ERROR answers not sent: one was still waiting (pf_core.c, err_pending);
                      * the profiler drops no other frame. With PF_COUNTERS_LIVE (8051) not stored
                      * at all: the body gets 0 there */
#endif
    PF_C_OVERFLOWS, PF_C_SPURIOUS, PF_C_FIRE_FRAMES,
    PF_C_TICKS_MISSED,
#ifndef PF_COUNTERS_LIVE
    /* Protocol version 2. rx_ring_overflow: no board has a receive ring (the AVR decodes each byte in
     * its RX ISR, the 8051 takes it from SBUF in its poll), so nothing increments it: it is stored so
     * that the body is a plain copy of the array. rx_hw_overrun: pf_rx_overrun, from the board. With
     * PF_COUNTERS_LIVE (8051) neither is stored: the body gets 0 for both (README.md). */
    PF_C_RX_RING_OVERFLOW, PF_C_RX_HW_OVERRUN,
#endif
    PF_C_N
};

/* Value the tick ISR writes to the timecode port at the next tick (low byte of the next timecode).
 * volatile: written by pf_tick in the tick ISR, read by the same ISR next time and by the host tests. */
extern volatile uint8_t pf_tc_next;

void pf_init(void);
void pf_tick(void);
#ifndef PF_FOREGROUND_IO
int16_t pf_tick_tx(void); /* T, before the port write: see pf_core.c (TIMECODE ahead) */
#else
/* The TIMECODE prepared ahead (pf_core.c). The tick ISR, right after its port write:
 *   if (pf_tc_armed) { pf_tc_armed = 0; <write pf_tc_first to the idle UART>; pf_tc_isr = 1; }
 * volatile: F writes them behind the ISR's back and the ISR behind F's. */
extern PF_FLAG pf_tc_armed;
extern PF_FLAG pf_tc_isr;
extern volatile uint8_t pf_tc_first;
#endif
void pf_event(uint8_t id, uint8_t level, const struct pf_stamp PF_RAM *s);
void pf_spurious(void);
#ifdef PF_STAMP_IN_RING
/* 8051 (no RAM for a stamp of its own): the next free ring record, as a stamp for the board to fill,
 * or 0 if the ring is full (the result is then counted lost). pf_event_commit stores it; info =
 * event id (bits 0-2) | PF_INFO_STROBE if the strobe is high after the edge. */
struct pf_stamp PF_RAM *pf_event_slot(void);
void pf_event_commit(uint8_t info);
#endif
void pf_rx_byte(uint8_t byte);
#ifndef PF_COUNTERS_LIVE
void pf_rx_overrun(void);      /* R: the UART lost a byte (AVR: DOR0 was set when the byte was read) */
#endif
int16_t pf_tx_next(void);      /* PF_FOREGROUND_IO: may return PF_TX_AGAIN (call again) */
#define PF_TX_AGAIN MM_ENC_AGAIN
uint8_t pf_service(void);
uint8_t pf_has_work(void); /* call with interrupts disabled: 1 if pf_service has something to do */
void pf_led_post(void);    /* power-on self test: every LED, one by one */

/* Introspection for tests (host) and the board. */
uint32_t pf_timecode(void);
uint16_t pf_counter(uint8_t idx);
uint8_t pf_ring_count(void);

#endif

/*
 * The executor's portable core: protocol handling, modes, dispatch bookkeeping. No RTOS, no
 * registers: the hardware layer feeds it received bytes (ex_rx_byte) and timecode port values
 * (ex_tick), and it answers through the hooks of ex_board.h.
 *
 * Locking: the core is not reentrant. On the target every call is made with the core lock held (a
 * FreeRTOS mutex shared by the timecode and serial tasks); interrupt handlers never call the core.
 * The only state shared with an ISR is the armed output (exb_arm / exb_disarm), published atomically.
 *
 * Dispatch. After every change of the list head or of the timecode, the core precomputes the byte the
 * event port must show at the next tick (event id on bits 0..2, the strobe toggled on bit 3) and arms
 * it with the timecode's low byte. Depending on the dispatch mode, the pin-change ISR (lowest latency)
 * or the timecode task right after its notification (the paper's design) writes it. ex_tick then does
 * the bookkeeping: pops the event, sends FIRED, and writes the port itself for any due event that was
 * not armed (e.g. one that arrived after its tick had begun, or the second of two events on one tick).
 *
 * Series (protocol version 5, SPEC.md PERIODIC): events at moments inside ticks (ex_series.h). The core
 * arms the next moment on the board (exb_arm_moment) when its tick is the current or the next one, and on
 * every call of ex_tick reports the moments the board has put out (FIRED each; a quiet series, version 6:
 * its last event only) and arms the next. A series and listed events do not mix: each refuses the other
 * with LIST_FULL.
 *
 * Load (protocol version 3, SPEC.md MODE): every accepted MODE sets the executor's load as well as its
 * mode; the core checks the values, keeps them for STATUS and hands them to the port (exb_set_load),
 * which runs the load's tasks. STATUS reports what they did (exb_load_counts).
 *
 * Protocol version 2 (SPEC.md "Requests and answers"): the core answers requests (QUERY, SCHEDULE,
 * MODE, CANCEL; FIRE, the profiler's, with ERROR UNKNOWN_TYPE) and frames of an unknown type or wrong
 * length (one ERROR each); every other valid frame is dropped and counted in rx_ok only, so a
 * looped-back line settles. CANCEL and MODE take events out of the list through the same discipline
 * as ex_tick: disarm first, report an event the ISR already put out, then re-arm from the new head.
 */
#ifndef EX_CORE_H
#define EX_CORE_H

#include <stdint.h>

#include "ex_list.h"
#include "ex_series.h"
#include "ex_tc.h"
#include "mmproto.h"

#define EX_FW_VERSION 0x0600u /* 6.0: protocol version 6 (PERIODIC's quiet flag) */

#define EX_OUT_ID_MASK 0x07u
#define EX_OUT_STROBE 0x08u

struct ex_cfg {
    uint32_t cpu_hz;
    uint32_t timer_hz;    /* HELLO.timer_hz: rate of the counter phase is measured with */
    uint32_t tick_counts; /* HELLO.tick_counts: expected tick length in those counts */
    uint32_t baud;
    uint8_t dispatch;     /* build default: MM_DISPATCH_ISR or MM_DISPATCH_TASK */
};

struct ex_counters {
    uint16_t rx_ok, rx_bad_crc, rx_bad_cobs, rx_too_long, rx_too_short, rx_bad_message, tx_dropped;
    uint16_t refused_duplicate, refused_full, refused_past_due; /* node_a, node_b, node_c */
};

struct ex {
    struct mm_dec dec;
    struct ex_tc tc;
    struct ex_list list;
    struct ex_series series; /* a PERIODIC series (series.left != 0 while it runs); never beside listed events */
    struct ex_series next;   /* the one queued behind it (next.left != 0), which starts when it ends */
    struct ex_counters cnt;
    const struct ex_cfg *cfg;
    uint32_t fired;
    uint16_t period;     /* verification: ticks between self-scheduled events */
    uint16_t since_gen;  /* verification: ticks since the last one */
    uint16_t local_tag;  /* verification: next tag */
    uint16_t rng;        /* verification: 16-bit Galois LFSR for random ids */
    uint8_t seq;         /* next sequence number we send */
    uint8_t mode;        /* MM_MODE_* */
    uint8_t dispatch;    /* MM_DISPATCH_* */
    uint8_t distance;    /* verification: ticks ahead */
    uint8_t random_ids;
    uint8_t next_id;     /* verification: next sequential id */
    uint8_t strobe;      /* strobe level now on the port (0 or EX_OUT_STROBE) */
    uint8_t cpu_load;           /* the load in force (MODE, version 3): echoed in STATUS */
    uint16_t load_period_us;
    uint16_t load_exec_us;
    uint32_t baud;              /* HELLO.baud: cfg->baud after reset, then the last BAUD taken (version 4) */
};

/* Sends a lone 0x00 then HELLO with seq 0. `port` is the timecode port's value at boot. */
void ex_init(struct ex *x, const struct ex_cfg *cfg, uint8_t port);
/* One received byte. */
void ex_rx_byte(struct ex *x, uint8_t byte);
/* A (stable) read of the timecode port; returns EX_TC_*. Call it on every pin-change notification,
 * and before ex_rx_byte so that a frame is handled against the current timecode. */
uint8_t ex_tick(struct ex *x, uint8_t port);
/* COUNTERS.node_d */
#define ex_glitches(x) ((x)->tc.glitches)

/* Verification mode: the LFSR step behind random ids (exposed for tests). */
uint16_t ex_lfsr(uint16_t r);

#endif

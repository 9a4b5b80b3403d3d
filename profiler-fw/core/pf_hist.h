/*
 * Profiler histograms (protocol version 6: SPEC.md 0x13 HIST_ARM, 0x14 HIST_SUMMARY, 0x15 HIST_CELLS).
 * Built only where the board defines PF_HIST (the AVR and the host tests; the 8051 has no RAM for it).
 * Portable C99, no heap, no recursion, fixed buffers, 32-bit arithmetic only (a few 32-bit divisions at
 * arm time and when a gap of missed events is skipped, none per edge).
 *
 * Every function here is F (the foreground, pf_service): the core takes the HIST_ARM and QUERY that R
 * decoded into its own buffers, hands over each executor edge when it takes the edge's ring record, and
 * asks for the next report frame when the line is free. No state here is touched by an ISR, so none of
 * it is volatile and none of it needs a critical section.
 */
#ifndef PF_HIST_H
#define PF_HIST_H

#include <stdint.h>
#include "pf_board.h"
#include "mmproto.h"

#ifdef PF_HIST
#ifdef PF_FOREGROUND_IO
#error "PF_HIST is for ISR-driven boards (the AVR, the host tests), not PF_FOREGROUND_IO (the 8051)"
#endif
#if MM_DEC_CAPACITY < MM_HDR_LEN + MM_HIST_ARM_LEN + 2
#error "PF_HIST needs a decode buffer that holds HIST_ARM (MM_DEC_CAPACITY >= 30)"
#endif

/* Any caller: 1 if a HIST_ARM body is within range (SPEC.md 0x13: else ERROR BAD_VALUE, nothing
 * changes). Reads the body only (R calls it on the frame in the decoder). */
uint8_t pf_hist_valid(const uint8_t *body);

void pf_hist_init(void);
/* A valid HIST_ARM, now_tc the extended timecode now: count 0 ends the series (answered by the final
 * full report), any other replaces it (answered by HIST_SUMMARY report 0). */
void pf_hist_arm(const uint8_t *body, uint32_t now_tc);
void pf_hist_query(void);           /* QUERY(what=0x14): a full report */
/* 1 while a series is armed without the raw flag: executor edges are binned, never sent. */
uint8_t pf_hist_takes_edges(void);
/* 1 while a series is armed (raw or not): the edges the core sends as RESULTs are binned too. */
uint8_t pf_hist_armed(void);
/* One executor edge: id, extended timecode and counts of its stamp. */
void pf_hist_edge(uint8_t id, uint32_t tc, uint32_t counts);
/* 1 if pf_hist_frame has a frame to send at timecode now_tc. */
uint8_t pf_hist_ready(uint32_t now_tc);
/* The next report frame: its body into body (MM_HIST_SUMMARY_LEN bytes of room), returns its type
 * (MM_T_HIST_CELLS or MM_T_HIST_SUMMARY), 0 if none. A report that starts here first counts missed the
 * events whose window closed by the present (ptc, pcounts): the core's earliest time an edge it has not
 * handed over yet can carry. */
uint8_t pf_hist_frame(uint8_t *body, uint32_t now_tc, uint32_t ptc, uint32_t pcounts);
#endif

#endif

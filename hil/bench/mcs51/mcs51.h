/*
 * The 8051 profiler's core for the bench: ucsim's 8051 simulator (Debian sdcc 4.2.0+dfsg-1, built by
 * tools/ucsim.sh into build/ucsim) behind a plain C API, so a C program (mmbench, run51) can run an
 * 87C51 image instruction by instruction on its own virtual clock.
 *
 * Time is counted in 8051 clocks (oscillator periods at 11.0592 MHz): one machine cycle is 12 clocks,
 * an instruction 1, 2 or 4 machine cycles (12..48 clocks). The clock starts at 0 at mcs51_create and
 * never goes back (mcs51_reset does not restart it: the bench's clock goes on through a node's reset).
 *
 * What the program sees happens between instructions: the API is called between instructions only,
 * except that the callbacks run inside one (see each).
 *
 * One 8051 per process: ucsim keeps its application in a global (`application`); a second
 * mcs51_create fails. Not thread-safe. Licence: ucsim is GPL-2.0-or-later, and so is a program that
 * links this (README.md in this directory).
 */
#ifndef MCS51_H
#define MCS51_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCS51_XTAL_HZ 11059200u
#define MCS51_CLOCKS_PER_CYCLE 12u /* the 87C51: 12 oscillator periods per machine cycle */

typedef struct mcs51 mcs51_t;

/* A write to P1 or P2 (port 1 or 2): every write, also one that leaves the latch as it was, with the
 * latch value after it (what the pins drive: quasi-bidirectional outputs, no external pull-down
 * assumed). clock: the end of the writing instruction, which is when the 8051's port latch takes the
 * value (S6P2 of its last machine cycle). Runs inside the instruction: it may call mcs51_break,
 * mcs51_clock, mcs51_set_p0 and mcs51_uart_rx (effective from the next instruction), nothing else. */
typedef void (*mcs51_port_fn)(void *ctx, int port, uint64_t clock, uint8_t value);

/* A byte the UART's transmitter completed, at the clock its stop bit ended (ucsim's transmitter
 * counts 10 bit times from the write to SBUF, in Timer1 overflows / 16 with SMOD = 1, / 32 without:
 * 960 machine cycles at 9600 baud; the clock is exact to one machine cycle). Runs inside an
 * instruction; same rules as mcs51_port_fn. */
typedef void (*mcs51_tx_fn)(void *ctx, uint64_t clock, uint8_t byte);

/* Creates the 8051 (an 87C51: 4 KB code, 128 B RAM, Timer0/1, UART, P0..P3) at 11.0592 MHz, no image.
 * NULL with a one-line reason in err (if err_len > 0) when it cannot (a second call, ucsim refused). */
mcs51_t *mcs51_create(char *err, unsigned err_len);

/* Loads an Intel HEX image into code memory and resets the core. Returns the bytes loaded, or -1 if
 * the file cannot be read, a line is not a valid record (checksum included) or it holds no data. */
long mcs51_load_ihx(mcs51_t *m, const char *path);

/* The node's reset (RST pin): registers and SFRs to their reset values (P0..P3 latches 0xFF, which
 * the port callback sees as writes), PC 0, the UART's transmitter and receiver idle (a byte in flight
 * is lost, a byte queued by mcs51_uart_rx is not: the line keeps bringing it). Code memory stays, so
 * does the clock. */
void mcs51_reset(mcs51_t *m);

/* The clock now (8051 clocks since mcs51_create). */
uint64_t mcs51_clock(const mcs51_t *m);

/* One instruction, and the interrupt ucsim accepts after it if any (the hardware LCALL to the vector,
 * 2 machine cycles: ucsim does both in one step); in idle mode one machine cycle. Returns the clocks
 * used (> 0), or -1 if the core stopped (an invalid instruction or address, a stack overflow, power-
 * down: nothing but a reset ends it here), with the reason in mcs51_error. */
int mcs51_step(mcs51_t *m);

/* Instructions until the clock reaches `until` (it stops at the first instruction boundary at or after
 * it: up to 47 clocks past). Returns 0, 1 if a callback called mcs51_break (it returns after that
 * instruction: the caller can then act on what the callback saw, e.g. schedule the other node's
 * answer to a P1 change, and run on), or -1 as mcs51_step. */
int mcs51_run_until(mcs51_t *m, uint64_t until);

/* From a callback: makes the running mcs51_run_until return 1 after the current instruction. */
void mcs51_break(mcs51_t *m);

/* What stopped the core, or "" (a static string). */
const char *mcs51_error(const mcs51_t *m);

void mcs51_on_port(mcs51_t *m, mcs51_port_fn fn, void *ctx);
void mcs51_on_tx(mcs51_t *m, mcs51_tx_fn fn, void *ctx);

/* The level of the P0 pins as outside circuits drive them (1 = high, also an undriven pin with the
 * board's pull-up). A read of P0 gives latch & pins; the profiler never writes P0 (latch 0xFF), so it
 * reads exactly this from the next instruction on. */
void mcs51_set_p0(mcs51_t *m, uint8_t pins);

/* A byte onto the UART's receive line. It starts (its start bit) now, or when the byte before it has
 * been received if the line is still busy with that one (the line at full rate, back to back); ucsim's
 * receiver then counts 10 bit times at the rate the 8051 set (Timer1) and sets RI with the byte in
 * SBUF at the end of the stop bit (a real 8051 sets RI half a bit earlier, at the stop bit's middle
 * sample). A byte whose start comes while the receiver is off (SCON.REN = 0) is lost, as on the line.
 * Returns 0, or -1 if the queue (256 bytes) is full. */
int mcs51_uart_rx(mcs51_t *m, uint8_t byte);

/* An SFR's value now (addr 0x80..0xFF: e.g. 0x8D TH1, 0x87 PCON, 0x98 SCON, 0xA0 P2), for a status or
 * the UART's rate; callable between instructions and from the callbacks. */
uint8_t mcs51_sfr(const mcs51_t *m, unsigned addr);

/* Bytes lost with REN = 0. */
unsigned long mcs51_uart_rx_lost(const mcs51_t *m);

#ifdef __cplusplus
}
#endif

#endif

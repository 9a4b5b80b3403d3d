/*
 * mmrig wire protocol, version 3: the C side (profiler and executor firmware).
 *
 * protocol/SPEC.md is the contract; section numbers below refer to it. Everything here is pure code:
 * no heap, no recursion, no I/O, no interrupts masked. It builds as C99 with gcc/clang on the host,
 * avr-gcc for the ATmega2560 and SDCC for the 8051 (mcs51, small model).
 *
 * 8051 notes (SDCC). Functions are not reentrant: their parameters and locals live at fixed addresses.
 * A build that calls protocol functions from an interrupt handler must define MM_ISR_SAFE: the sources
 * then switch overlaying off (#pragma nooverlay), because an interrupt handler calling an overlaid
 * function would share that memory with whatever main was running; even so one function must not
 * run in two contexts at once (decoder in one context, encoder in one context at a time, mm_msg_check
 * and the mm_get/mm_put helpers in one context). Encoder and decoder share only mm_crc16_shift8,
 * which keeps everything in registers (`make mcs51` checks that). Without MM_ISR_SAFE (the 8051
 * profiler, which runs all protocol code from main) SDCC may overlay the functions' locals, which
 * saves internal RAM. The state structs must be in data or idata (MM_RAM below).
 */
#ifndef MMPROTO_H
#define MMPROTO_H

#include <stdint.h>

/* Address-space qualifiers. On the 8051, MM_ROM puts tables in code memory, and MM_RAM makes the
 * encoder/decoder state pointers 1-byte idata pointers (they reach both data and idata): a generic
 * 3-byte pointer would turn every field access into a library call. Override MM_RAM (e.g. empty)
 * for a build that keeps the state in xdata. */
#if defined(__SDCC_mcs51)
#ifndef MM_ROM
#define MM_ROM __code
#endif
#ifndef MM_RAM
#define MM_RAM __idata
#endif
#else
#ifndef MM_ROM
#define MM_ROM
#endif
#ifndef MM_RAM
#define MM_RAM
#endif
#endif

/* ---- Sizes (section 2) ---------------------------------------------------------------------- */

#define MM_PROTO_VERSION 6
#define MM_HDR_TYPE 0 /* payload offsets of the header fields */
#define MM_HDR_SEQ 1
#define MM_HDR_LEN 2 /* header length = payload offset of the body */
#define MM_CRC_LEN 2
#define MM_MAX_BODY 40 /* 32 until version 2: version 3's STATUS has 33 body bytes */
#define MM_MAX_PAYLOAD (MM_HDR_LEN + MM_MAX_BODY)   /* 42 */
#define MM_MAX_FRAME (MM_MAX_PAYLOAD + MM_CRC_LEN)  /* 44 */
#define MM_MAX_ENCODED (MM_MAX_FRAME + 1)           /* 45 */
#define MM_MIN_FRAME (MM_HDR_LEN + MM_CRC_LEN)      /* 4 */
#define MM_WIRE_LEN(body_len) ((body_len) + 6)      /* bytes on the line, delimiter included */

/* ---- CRC-16/IBM-3740 (section 3) ------------------------------------------------------------ */

#define MM_CRC_INIT 0xFFFFu
#define MM_CRC_CHECK 0x29B1u /* CRC of "123456789" */

/* MM_CRC_SHIFT8_ONLY leaves mm_crc16_update out (a node that only uses the encoder and decoder: on
 * the 8051 its parameter takes a byte of internal RAM that is never overlaid). */
#ifndef MM_CRC_SHIFT8_ONLY
uint16_t mm_crc16_update(uint16_t crc, uint8_t byte);
#endif
/* The same step with the byte already folded in: mm_crc16_update(crc, b) ==
 * mm_crc16_shift8(crc ^ ((uint16_t)b << 8)). Its single argument travels in registers on the 8051,
 * which is why the encoder and the decoder call this one (see the 8051 notes above). */
uint16_t mm_crc16_shift8(uint16_t x);

/* ---- Streaming encoder (section 2) ---------------------------------------------------------- */

/* How the encoder finds a frame's body: by default a generic pointer (on the 8051 the body may live
 * in code memory). A build with MM_ENC_BODY_FN (see mm_enc.c) may make it any scalar its body
 * function understands, e.g. a 1-byte selector (the 8051 profiler: 2 bytes less state). */
#ifndef MM_ENC_BODY_T
#define MM_ENC_BODY_T const uint8_t *
#endif

struct mm_enc {
    uint8_t pos;    /* index in [type, seq, body..., crc_lo, crc_hi] of the next byte (see mm_enc.c) */
    uint8_t run;    /* data bytes left in the current COBS block */
    uint8_t len;    /* body length */
    uint8_t hc[4];  /* type, seq, crc_lo, crc_hi: the bytes around the body */
    MM_ENC_BODY_T body; /* see MM_ENC_BODY_T above */
};

/* Prepares one frame; the body must stay unchanged until mm_enc_next returned -1.
 * body_len <= MM_MAX_BODY (not checked: the caller's message table fixes it).
 * It computes the CRC over the payload (a few dozen machine cycles per byte on the 8051), so call it
 * from main rather than from an ISR. mm_enc_next then costs little per data byte, but a COBS code
 * byte costs a scan to the next zero: on the 8051 several hundred cycles for a 26-byte zero-free
 * block (`make mcs51-timing`). mm_enc_start == mm_enc_begin, then mm_enc_crc_step until it returns 0.
 */
void mm_enc_start(struct mm_enc MM_RAM *e, uint8_t type, uint8_t seq, const uint8_t *body,
                  uint8_t body_len);
/* Next wire byte (0..255, the final 0x00 delimiter included), then -1 for ever. */
int16_t mm_enc_next(struct mm_enc MM_RAM *e);

/* The same, in bounded steps, for a foreground loop that must never stay away long (the 8051
 * profiler's poll of its event port): mm_enc_begin stores the header; each mm_enc_crc_step folds one
 * payload byte into the CRC and returns 1 while more remain (body_len + 2 steps in all). Then
 * mm_enc_step gives the same bytes as mm_enc_next, but looks at most one byte ahead per call: it
 * returns MM_ENC_AGAIN while it is still scanning for a code byte (call it again). Do not mix
 * mm_enc_next and mm_enc_step within one frame. Define MM_ENC_NO_STEP to leave mm_enc_step out,
 * MM_ENC_STEP_ONLY to leave mm_enc_start and mm_enc_next out (code size). */
#define MM_ENC_AGAIN (-2)
void mm_enc_begin(struct mm_enc MM_RAM *e, uint8_t type, uint8_t seq, MM_ENC_BODY_T body,
                  uint8_t body_len);
uint8_t mm_enc_crc_step(struct mm_enc MM_RAM *e);
int16_t mm_enc_step(struct mm_enc MM_RAM *e);

/* ---- Streaming decoder (section 6) ---------------------------------------------------------- */

/* Decode buffer size. It changes struct mm_dec: build the library and all its users with the same
 * value. A node that only receives short messages may use less (the 8051 profiler: FIRE, 7). */
#ifndef MM_DEC_CAPACITY
#define MM_DEC_CAPACITY MM_MAX_FRAME
#endif
#if MM_DEC_CAPACITY < MM_MIN_FRAME || MM_DEC_CAPACITY > MM_MAX_FRAME
#error "MM_DEC_CAPACITY must be within MM_MIN_FRAME..MM_MAX_FRAME (SPEC.md section 6)"
#endif
/* Longest encoded frame (delimiter excluded) the decoder accepts; longer ones are too_long. */
#define MM_DEC_MAX_ENCODED (MM_DEC_CAPACITY + 1)

/* Results of mm_dec_push / mm_cobs_push, in the order SPEC.md section 6 checks them. */
#define MM_DEC_BUSY 0      /* nothing completed (also an empty frame: two delimiters in a row) */
#define MM_DEC_FRAME 1     /* a frame is ready in buf, see mm_dec_payload_len */
#define MM_DEC_TOO_LONG 2
#define MM_DEC_BAD_COBS 3
#define MM_DEC_TOO_SHORT 4 /* mm_dec_push only */
#define MM_DEC_BAD_CRC 5   /* mm_dec_push only */

struct mm_dec {
    uint8_t n;    /* encoded bytes of this frame so far; 0 at a frame start; 0xFF while discarding */
    uint8_t left; /* data bytes left in the current COBS block; the length after MM_DEC_FRAME */
    uint16_t crc; /* CRC of buf[0 .. n-3), i.e. of everything but the last two decoded bytes */
    uint8_t buf[MM_DEC_CAPACITY]; /* decoded bytes: payload, then CRC */
};

void mm_dec_init(struct mm_dec MM_RAM *d);
/* Feeds one received byte; returns one of MM_DEC_*. On MM_DEC_FRAME the payload (header + body) is
 * d->buf[0 .. mm_dec_payload_len(d)), valid until the next push; run mm_msg_check on it. */
uint8_t mm_dec_push(struct mm_dec MM_RAM *d, uint8_t byte);
#define mm_dec_payload_len(d) ((d)->left)
/* True if the next byte pushed would be the first byte of a frame. */
#define mm_dec_at_frame_start(d) ((d)->n == 0)

/* The COBS layer alone (no length or CRC checks): returns MM_DEC_BUSY, MM_DEC_FRAME (decoded bytes
 * d->buf[0 .. mm_dec_payload_len(d))), MM_DEC_TOO_LONG or MM_DEC_BAD_COBS. mm_dec_push is built on
 * it. */
uint8_t mm_cobs_push(struct mm_dec MM_RAM *d, uint8_t byte);

/* ---- Sequence numbers (section 4) ----------------------------------------------------------- */

/* Frames lost between the last accepted seq and this one. The caller skips it for the first frame
 * and for HELLO, which set the baseline instead. */
#define mm_seq_gap(last, seq) ((uint8_t)((uint8_t)(seq) - (uint8_t)(last) - 1u))

/* ---- Messages (section 5) ------------------------------------------------------------------- */

#define MM_T_HELLO 0x01
#define MM_T_QUERY 0x02
#define MM_T_ERROR 0x03
#define MM_T_COUNTERS 0x04
#define MM_T_NOP 0x05
#define MM_T_BAUD 0x06
#define MM_T_TIMECODE 0x10
#define MM_T_RESULT 0x11
#define MM_T_FIRE 0x12
#define MM_T_HIST_ARM 0x13     /* version 6 */
#define MM_T_HIST_SUMMARY 0x14 /* version 6 */
#define MM_T_HIST_CELLS 0x15   /* version 6 */
#define MM_T_SCHEDULE 0x20
#define MM_T_ACK 0x21
#define MM_T_MODE 0x22
#define MM_T_STATUS 0x23
#define MM_T_LOCAL_EVENT 0x24
#define MM_T_FIRED 0x25
#define MM_T_CANCEL 0x26
#define MM_T_CANCELLED 0x27
#define MM_T_PERIODIC 0x28 /* version 5 */

/* Field offsets within the body (add MM_HDR_LEN for the payload offset) and body lengths. */
#define MM_HELLO_PROTO_VERSION 0 /* u8 */
#define MM_HELLO_NODE_KIND 1     /* u8 */
#define MM_HELLO_FW_VERSION 2    /* u16 */
#define MM_HELLO_CPU_HZ 4        /* u32 */
#define MM_HELLO_TIMER_HZ 8      /* u32 */
#define MM_HELLO_TICK_COUNTS 12  /* u32 */
#define MM_HELLO_BAUD 16         /* u32 */
#define MM_HELLO_FLAGS 20        /* u8 */
#define MM_HELLO_RESET_CAUSE 21  /* u8 */
#define MM_HELLO_LEN 22

#define MM_QUERY_WHAT 0 /* u8 */
#define MM_QUERY_LEN 1

#define MM_ERROR_CODE 0     /* u8 */
#define MM_ERROR_REF_TYPE 1 /* u8 */
#define MM_ERROR_REF_TAG 2  /* u16 */
#define MM_ERROR_TIMECODE 4 /* u32 */
#define MM_ERROR_LEN 8

#define MM_COUNTERS_RX_OK 0           /* u16, all fields */
#define MM_COUNTERS_RX_BAD_CRC 2
#define MM_COUNTERS_RX_BAD_COBS 4
#define MM_COUNTERS_RX_TOO_LONG 6
#define MM_COUNTERS_RX_TOO_SHORT 8
#define MM_COUNTERS_RX_BAD_MESSAGE 10
#define MM_COUNTERS_TX_DROPPED 12
#define MM_COUNTERS_NODE_A 14
#define MM_COUNTERS_NODE_B 16
#define MM_COUNTERS_NODE_C 18
#define MM_COUNTERS_NODE_D 20
#define MM_COUNTERS_RX_RING_OVERFLOW 22
#define MM_COUNTERS_RX_HW_OVERRUN 24
#define MM_COUNTERS_LEN 26

#define MM_TIMECODE_TIMECODE 0 /* u32 */
#define MM_TIMECODE_LEN 4

#define MM_RESULT_EVENT_ID 0 /* u8 */
#define MM_RESULT_FLAGS 1    /* u8 */
#define MM_RESULT_TAG 2      /* u16 */
#define MM_RESULT_TIMECODE 4 /* u32 */
#define MM_RESULT_COUNTS 8   /* u32 */
#define MM_RESULT_LEN 12

#define MM_FIRE_EVENT_ID 0 /* u8 */
#define MM_FIRE_TAG 1      /* u16 */
#define MM_FIRE_LEN 3

#define MM_SCHEDULE_TAG 0      /* u16 */
#define MM_SCHEDULE_EVENT_ID 2 /* u8 */
#define MM_SCHEDULE_TIMECODE 3 /* u32 */
#define MM_SCHEDULE_LEN 7

#define MM_ACK_TAG 0      /* u16 */
#define MM_ACK_EVENT_ID 2 /* u8 */
#define MM_ACK_TIMECODE 3 /* u32 */
#define MM_ACK_PHASE 7    /* u16 */
#define MM_ACK_PENDING 9  /* u8 */
#define MM_ACK_LEN 10

#define MM_MODE_MODE 0       /* u8 */
#define MM_MODE_DISPATCH 1   /* u8 */
#define MM_MODE_DISTANCE 2   /* u8 */
#define MM_MODE_PERIOD 3     /* u16 */
#define MM_MODE_RANDOM_IDS 5 /* u8 */
#define MM_MODE_CPU_LOAD 6           /* u8, version 3: the executor's load */
#define MM_MODE_PERIODIC_PERIOD_US 7 /* u16 */
#define MM_MODE_PERIODIC_EXEC_US 9   /* u16 */
#define MM_MODE_LEN 11

#define MM_STATUS_MODE 0            /* u8 */
#define MM_STATUS_DISPATCH 1        /* u8 */
#define MM_STATUS_TIMECODE 2        /* u32 */
#define MM_STATUS_PENDING 6         /* u8 */
#define MM_STATUS_CAPACITY 7        /* u8 */
#define MM_STATUS_FIRED 8           /* u32 */
#define MM_STATUS_STACK_TIMECODE 12 /* u16 */
#define MM_STATUS_STACK_SERIAL 14   /* u16 */
#define MM_STATUS_STACK_STATUS 16   /* u16 */
#define MM_STATUS_CPU_LOAD 18           /* u8, version 3: the load in force ... */
#define MM_STATUS_PERIODIC_PERIOD_US 19 /* u16 */
#define MM_STATUS_PERIODIC_EXEC_US 21   /* u16 */
#define MM_STATUS_CPU_LOOPS 23          /* u32: ... and what it did since reset */
#define MM_STATUS_PERIODIC_RUNS 27      /* u32 */
#define MM_STATUS_PERIODIC_OVERRUNS 31  /* u16 */
#define MM_STATUS_LEN 33

#define MM_LOCAL_EVENT_TAG 0      /* u16 */
#define MM_LOCAL_EVENT_EVENT_ID 2 /* u8 */
#define MM_LOCAL_EVENT_TIMECODE 3 /* u32 */
#define MM_LOCAL_EVENT_LEN 7

#define MM_FIRED_TAG 0      /* u16 */
#define MM_FIRED_EVENT_ID 2 /* u8 */
#define MM_FIRED_TIMECODE 3 /* u32 */
#define MM_FIRED_LEN 7

#define MM_CANCEL_TAG 0   /* u16 */
#define MM_CANCEL_FLAGS 2 /* u8 */
#define MM_CANCEL_LEN 3

#define MM_CANCELLED_TAG 0     /* u16 */
#define MM_CANCELLED_REMOVED 2 /* u8 */
#define MM_CANCELLED_PENDING 3 /* u8 */
#define MM_CANCELLED_LEN 4

/* PERIODIC (version 5): a series of events at moments inside ticks; version 6 adds flags */
#define MM_PERIODIC_TAG 0          /* u16 */
#define MM_PERIODIC_EVENT_ID 2     /* u8 */
#define MM_PERIODIC_TIMECODE 3     /* u32 */
#define MM_PERIODIC_FIRST 7        /* u32 */
#define MM_PERIODIC_PERIOD 11      /* u32 */
#define MM_PERIODIC_TICK_COUNTS 15 /* u32 */
#define MM_PERIODIC_COUNT 19       /* u16 */
#define MM_PERIODIC_FLAGS 21       /* u8, version 6 */
#define MM_PERIODIC_LEN 22
#define MM_PERIODIC_FLAG_QUIET 0x01 /* a FIRED for the series' last event only */

/* HIST_ARM (version 6): the profiler's histogram of a series of events */
#define MM_HIST_ARM_TIMECODE 0      /* u32 */
#define MM_HIST_ARM_FIRST 4         /* u32 */
#define MM_HIST_ARM_PERIOD 8        /* u32 */
#define MM_HIST_ARM_COUNT 12        /* u32 */
#define MM_HIST_ARM_LATE 16         /* u32 */
#define MM_HIST_ARM_EARLY 20        /* u16 */
#define MM_HIST_ARM_EVENT_ID 22     /* u8 */
#define MM_HIST_ARM_CELL_SHIFT 23   /* u8 */
#define MM_HIST_ARM_REPORT_TICKS 24 /* u8 */
#define MM_HIST_ARM_FLAGS 25        /* u8 */
#define MM_HIST_ARM_LEN 26
#define MM_HIST_ARM_FLAG_RAW 0x01

/* HIST_SUMMARY (version 6) */
#define MM_HIST_SUMMARY_REPORT 0 /* u16 */
#define MM_HIST_SUMMARY_FLAGS 2  /* u8 */
#define MM_HIST_SUMMARY_OK 3     /* u32 */
#define MM_HIST_SUMMARY_LATE 7   /* u32 */
#define MM_HIST_SUMMARY_EARLY 11 /* u32 */
#define MM_HIST_SUMMARY_MISSED 15 /* u32 */
#define MM_HIST_SUMMARY_STRAY 19 /* u16 */
#define MM_HIST_SUMMARY_MIN 21   /* u32 */
#define MM_HIST_SUMMARY_MAX 25   /* u32 */
#define MM_HIST_SUMMARY_WORST 29 /* u32 */
#define MM_HIST_SUMMARY_SUM_LO 33 /* u32 */
#define MM_HIST_SUMMARY_SUM_HI 37 /* u16 */
#define MM_HIST_SUMMARY_BLOCKS 39 /* u8 */
#define MM_HIST_SUMMARY_LEN 40
#define MM_HIST_SUMMARY_FLAG_ARMED 0x01
#define MM_HIST_SUMMARY_FLAG_FINAL 0x02

/* HIST_CELLS (version 6): 8 cells' cumulative counts */
#define MM_HIST_CELLS_REPORT 0 /* u16 */
#define MM_HIST_CELLS_CELL 2   /* u16 */
#define MM_HIST_CELLS_C0 4    /* u32 */
#define MM_HIST_CELLS_C1 8    /* u32 */
#define MM_HIST_CELLS_C2 12   /* u32 */
#define MM_HIST_CELLS_C3 16   /* u32 */
#define MM_HIST_CELLS_C4 20   /* u32 */
#define MM_HIST_CELLS_C5 24   /* u32 */
#define MM_HIST_CELLS_C6 28   /* u32 */
#define MM_HIST_CELLS_C7 32   /* u32 */
#define MM_HIST_CELLS_LEN 36
#define MM_HIST_BLOCK 8        /* cells per HIST_CELLS frame */
#define MM_HIST_CELLS 1000     /* cells 0 .. 999; cell 1000 is the overflow cell */

/* NOP (version 3): filler the scheduler sends the executor as receive load; never answered */
#define MM_NOP_FILL 0 /* u8 */
#define MM_NOP_LEN 1

/* BAUD (version 4): a request to run the link at baud_hundreds * 100 baud; answered with HELLO at the new
 * rate, or ERROR BAD_VALUE at the old one */
#define MM_BAUD_HUNDREDS 0 /* u16 */
#define MM_BAUD_LEN 2

/* The divisor (1 .. max_div) of a UART whose rate is clock_hz / divisor that makes hundreds * 100 baud within
 * 2.5 % (SPEC.md 0x06), or 0 when none does (mm_baud.c). The ATmega2560 in double speed: clock F_CPU / 8,
 * divisor UBRR0 + 1 (at most 4096); 115200 at 16 MHz -> 17 = 117647 baud (+2.1 %). */
uint16_t mm_baud_div(uint32_t clock_hz, uint16_t hundreds, uint16_t max_div);

/* Node kinds (HELLO.node_kind). */
#define MM_NODE_PROFILER 1
#define MM_NODE_EXECUTOR 2
#define MM_NODE_SCHEDULER 3

/* Error codes (ERROR.code). */
#define MM_ERR_DUPLICATE 1
#define MM_ERR_LIST_FULL 2
#define MM_ERR_PAST_DUE 3
#define MM_ERR_BAD_MODE 4
#define MM_ERR_UNKNOWN_TYPE 5
#define MM_ERR_BAD_LENGTH 6
#define MM_ERR_BAD_VALUE 7
#define MM_ERR_OVERFLOW 8
#define MM_ERR_HORIZON 9

/* HELLO.flags bits. */
#define MM_HELLO_FLAG_CAPTURE 0x01
#define MM_HELLO_FLAG_POLLED 0x02
#define MM_HELLO_FLAG_8051 0x04
#define MM_HELLO_FLAG_HIST 0x08 /* version 6: the profiler keeps histograms */

/* HELLO.reset_cause bits: the AVR's MCUSR bits as they are; 0 = the node cannot tell. */
#define MM_RESET_POWER_ON 0x01
#define MM_RESET_EXTERNAL 0x02
#define MM_RESET_BROWN_OUT 0x04
#define MM_RESET_WATCHDOG 0x08
#define MM_RESET_JTAG 0x10

/* CANCEL.flags bits. */
#define MM_CANCEL_ALL 0x01

/* The executor refuses a SCHEDULE more than this many ticks ahead (ERROR HORIZON). */
#define MM_SCHEDULE_HORIZON_TICKS 32768ul

/* RESULT.flags bits. */
#define MM_RESULT_FLAG_FIRE 0x01
#define MM_RESULT_FLAG_LOST_BEFORE 0x02
#define MM_RESULT_FLAG_STROBE 0x04

/* MODE.mode / STATUS.mode. */
#define MM_MODE_IDLE 0
#define MM_MODE_VERIFICATION 1
#define MM_MODE_MIXED 2

/* MODE.dispatch / STATUS.dispatch. */
#define MM_DISPATCH_ISR 0
#define MM_DISPATCH_TASK 1

/* MODE's executor load (version 3): periodic_period_us is 0 (no periodic task) or at least this. */
#define MM_LOAD_PERIOD_MIN_US 1000u

/* Results of mm_msg_check. */
#define MM_MSG_OK 0
#define MM_MSG_UNKNOWN_TYPE 1
#define MM_MSG_BAD_LENGTH 2

/* Body length of a type, 0 if the type is unknown (no known body is empty). */
uint8_t mm_msg_body_len(uint8_t type);
/* Message-level checks of a payload (header + body) that passed mm_dec_push. */
uint8_t mm_msg_check(const uint8_t *payload, uint8_t len);

/* ---- Little-endian fields (byte by byte: no alignment or host byte order assumed) ------------ */

void mm_put_u16(uint8_t *p, uint16_t v);
void mm_put_u32(uint8_t *p, uint32_t v);
uint16_t mm_get_u16(const uint8_t *p);
uint32_t mm_get_u32(const uint8_t *p);

#endif /* MMPROTO_H */

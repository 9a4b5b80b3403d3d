/*
 * Profiler core (see pf_core.h). Contexts:
 *   T  tick ISR           pf_tick
 *   E  event capture      pf_event, pf_spurious (capture ISR on the AVR; foreground poll with
 *                         interrupts masked on the 8051)
 *   R  UART receive ISR   pf_rx_byte
 *   X  UART transmit ISR  pf_tx_next
 *   F  foreground         pf_service, pf_has_work
 * Every variable below says which contexts touch it and why that is safe. The 8051 build keeps
 * locals and parameters at fixed addresses (SDCC, non-reentrant), so a function that two contexts
 * may call (push_result: E and R) is only ever called with interrupts masked.
 */
#include "pf_core.h"

#if defined(__SDCC_mcs51) && !defined(PF_FOREGROUND_IO)
#pragma nooverlay /* functions here run in ISRs: their locals must not share memory with main's */
#endif
/* PF_FOREGROUND_IO (the 8051): the board calls pf_rx_byte and pf_tx_next from its main loop, not
 * from ISRs; the tick ISR only writes the port and advances pf_tc_next (no pf_tick), and the core
 * follows it in pf_service (tick_sync). A received frame is handled by the next pf_service call,
 * and pf_tx_next returns PF_TX_AGAIN while the encoder is still looking ahead: every call does a
 * bounded amount of work, so the foreground poll of the event port is never away for long. Then
 * only main touches the core's state, and SDCC may overlay the locals (no nooverlay). */

#define U32LE(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((uint32_t)(v) >> 24)

/* HELLO body: constant, so it lives in code memory on the 8051 (the encoder takes a generic
 * pointer). Layout: SPEC.md section 5, 0x01 HELLO. reset_cause (version 2) is PF_RESET_CAUSE where the
 * board knows it at build time (the 8051: 0, it cannot tell); else the board says it at run time
 * (board_reset_cause, the AVR's MCUSR) and pf_service copies the body to tx_body to put it in. */
#ifdef PF_RESET_CAUSE
#define HELLO_RESET_CAUSE PF_RESET_CAUSE
#else
#define HELLO_RESET_CAUSE 0 /* replaced in tx_body */
#ifdef PF_RESULT_LIVE
#error "PF_RESULT_LIVE (no tx_body) needs a constant PF_RESET_CAUSE"
#endif
#endif
static const uint8_t MM_ROM hello_body[MM_HELLO_LEN] = {
    MM_PROTO_VERSION, MM_NODE_PROFILER, (uint8_t)PF_FW_VERSION, (uint8_t)(PF_FW_VERSION >> 8),
    U32LE(PF_CPU_HZ), U32LE(PF_TIMER_HZ), U32LE(PF_TICK_COUNTS), U32LE(PF_BAUD), PF_HELLO_FLAGS,
    HELLO_RESET_CAUSE,
};

/* T writes pf_tc_next; T reads it (the port value of the next tick). Byte-sized: no tearing. */
volatile uint8_t pf_tc_next;

/* Extended timecode. Written only by T; F reads it inside a critical section (4 bytes are not
 * read atomically on an 8-bit CPU). volatile: changes behind F's back. */
static volatile uint32_t tc_ext;
/* Set by T (a tick happened), cleared by F when it queues that TIMECODE frame. Byte flag. */
static PF_FLAG tc_pending;
/* Set by R (QUERY) or pf_init, cleared by F when it starts the reply. Byte flags. */
static PF_FLAG hello_pending;
static PF_FLAG counters_pending;
/* 1 while a frame is on its way: set by F before kicking the transmitter, cleared by X after the
 * last byte. F starts a frame only while it is 0, so enc/tx_body/tx_lone_delim are never touched by
 * F and X at the same time. volatile: X clears it behind F's back. */
static PF_FLAG tx_busy;
static PF_FLAG tx_lone_delim; /* F sets it before the first kick; X clears it (guarded by tx_busy) */
/* F: the encoder is folding the payload into its CRC, one byte per pf_service call (tx_busy is 0
 * meanwhile, X does not touch enc); the frame is kicked when it is done. */
static PF_FLAG tx_crc;
#ifdef PF_FOREGROUND_IO
static PF_FLAG rx_frame;      /* F: dec holds a frame for the next pf_service call */
static uint8_t seq;           /* F only */
/* TIMECODE ahead, foreground version (the 8051; the ISR-driven one is below). Built after the tick by
 * the foreground, one bounded step per pf_service call, the frame's first byte went out 2400 .. 2900
 * machine cycles (2.6 .. 3.1 ms) after the P1 change (measured in ucsim). Instead, while the line is
 * idle and nothing else waits, F prepares TIMECODE(tc_ext + 1, seq) in enc itself (no RAM for a copy:
 * begin, CRC steps, then mm_enc_step up to its first byte, one step per call, arm_step) and publishes
 * that first byte in pf_tc_first with pf_tc_armed. The Timer0 ISR, right after its P1 write, writes it
 * to SBUF, clears pf_tc_armed and sets pf_tc_isr (pf_core.h); F then takes the frame over (tc_take,
 * from pf_tx_next or tick_sync, whichever runs first) and sends the rest from enc as usual.
 *   pf_tc_armed   set by F (line idle, nothing pending: enc is not in use), cleared by T when it sends
 *                 or by F before it starts another frame (a bit: clr is atomic; then F checks
 *                 pf_tc_isr, which T sets in the same uninterrupted ISR)
 *   pf_tc_isr     set by T, cleared by F in tc_take
 *   pf_tc_first   written by F before it sets pf_tc_armed, read by T
 * volatile: T changes or reads them behind F's back. */
#ifndef PF_RESULT_LIVE
#error "PF_FOREGROUND_IO needs PF_RESULT_LIVE (the TIMECODE ahead reads tc_ext + 1 through pf_enc_body)"
#endif
PF_FLAG pf_tc_armed;
PF_FLAG pf_tc_isr;
volatile uint8_t pf_tc_first;
static PF_FLAG tc_arming;     /* F: enc holds the TIMECODE ahead (being prepared, or armed) */
static PF_FLAG tc_arm_crc;    /* F: ... and its CRC is being folded */
#else
/* TIMECODE ahead (ISR-driven builds: the AVR). The PC dates each tick by the arrival of its TIMECODE
 * frame, so the frame should start with the tick: built by F in the foreground (pf_service), it took
 * 97 us from the port change to the first byte (ISR exit, wake-up, body, 6 CRC steps, kick; measured
 * in the bench's one-node mode). Instead F encodes the next tick's frame (timecode tc_ext + 1, the seq
 * it will carry, CRC, COBS, delimiter) into tc_wire while it is idle, and the tick ISR starts it
 * (pf_tick_tx: the board writes the first byte right after the port write; pf_tick: a kick, or
 * right after the frame on the line, by X). tc_ahead says who owns tc_wire, and seq with it:
 *   AHEAD_NONE     F: may write tc_wire, reads and advances seq for the frames it starts
 *   AHEAD_ARMED    tc_wire = TIMECODE(tc_ext + 1, seq). T takes it at the tick; F may take it back
 *                  (-> NONE) in a critical section with tx_busy 0, before it starts another frame,
 *                  which takes that seq (then it arms again with the next one)
 *   AHEAD_DUE      T took it while another frame was on the line: X sends it right after that frame
 *                  (a TIMECODE goes before any frame still waiting, as in pf_service); dropped by the
 *                  next tick if that frame is still on the line then (the tick is counted missed)
 *   AHEAD_SENDING  X sends tc_wire[tc_pos..]; back to NONE after the delimiter
 * T or X advance seq when they commit the frame to the line (ARMED or DUE -> SENDING), F only in NONE,
 * so one frame's seq is never taken twice and frames leave in seq order (SPEC.md section 4). DUE and
 * SENDING imply tx_busy = 1, so F (which starts frames only with tx_busy 0) never meets them.
 * T and X never interrupt each other (AVR: an ISR runs with interrupts off). volatile: T and X change
 * tc_ahead and seq behind F's back. */
/* ahead_arm is not inlined into pf_service: its 11-byte encoder on the stack would give pf_service a
 * stack frame, +30 cycles on each of the 14 calls that fold a RESULT's CRC (measured). */
#if defined(__GNUC__)
#define PF_NOINLINE __attribute__((noinline))
#else
#define PF_NOINLINE
#endif
#define AHEAD_NONE 0
#define AHEAD_ARMED 1
#define AHEAD_DUE 2
#define AHEAD_SENDING 3
static volatile uint8_t tc_ahead;
static volatile uint8_t seq;
static uint8_t tc_wire[MM_WIRE_LEN(MM_TIMECODE_LEN)];
static uint8_t tc_pos;     /* X (T sets it when it commits the frame): next byte of tc_wire */
static uint8_t tc_started; /* T only: pf_tick_tx started this tick's frame, pf_tick notes it */
#endif
static struct mm_enc MM_RAM enc; /* F (start) and X (next), never at once: see tx_busy */
/* Frame bodies built in RAM: TIMECODE and RESULT (COUNTERS too unless PF_COUNTERS_LIVE). With
 * PF_RESULT_LIVE (8051: no RAM for it) there is no such buffer: the TIMECODE body is tc_ext itself
 * (little-endian on SDCC; tick_sync waits while that frame is out, tx_tc), and a RESULT body is
 * generated byte by byte from the oldest ring record, which stays in the ring until its frame has
 * been sent (tx_res), by pf_enc_body (the encoder's MM_ENC_BODY_FN). */
#if defined(PF_COUNTERS_LIVE) && !defined(PF_RESULT_LIVE)
#error "PF_COUNTERS_LIVE needs PF_RESULT_LIVE (the COUNTERS body comes from pf_enc_body)"
#endif
#ifdef PF_RESULT_LIVE
/* The encoder's body is a 1-byte selector (MM_ENC_BODY_T = uint8_t in the build), not a pointer. */
#define PF_BODY_RESULT 0
#define PF_BODY_TIMECODE 1
#define PF_BODY_HELLO 2
#define PF_BODY_COUNTERS 3
#define PF_BODY_TC_NEXT 4 /* the TIMECODE ahead: tc_ext + 1 */
typedef uint8_t pf_body_t;
static PF_FLAG tx_tc;
static PF_FLAG tx_res;
static void pop_result(void);
#elif defined(PF_COUNTERS_LIVE)
static uint8_t tx_body[MM_RESULT_LEN];
#else
static uint8_t tx_body[MM_COUNTERS_LEN];
#endif
#ifndef PF_RESULT_LIVE
typedef const uint8_t *pf_body_t;
#define PF_BODY_RESULT tx_body
#define PF_BODY_TIMECODE tx_body
#ifdef PF_RESET_CAUSE
#define PF_BODY_HELLO hello_body
#else
#define PF_BODY_HELLO tx_body /* hello_body with the board's reset cause (pf_service) */
#endif
#ifdef PF_COUNTERS_LIVE
#define PF_BODY_COUNTERS ((const uint8_t *)counters)
#else
#define PF_BODY_COUNTERS tx_body
#endif
#endif

static struct mm_dec MM_RAM dec;    /* R only */
static struct pf_stamp PF_RAM rx_stamp;    /* R only: time of the current frame's first byte */

/* Counters, in COUNTERS body order. Incremented by R, T, E (with interrupts masked where E is the
 * foreground) and F; read by F in a critical section. volatile: ISRs change them. */
static volatile uint16_t counters[PF_C_N];
#ifndef PF_COUNTERS_LIVE
/* The COUNTERS body is the array as u16s (pf_service): it must fill the body exactly. */
typedef char pf_counters_fill_the_body[(2 * PF_C_N == MM_COUNTERS_LEN) ? 1 : -1];
#endif

/* Result ring. Producers: E and R (FIRE), always with interrupts masked (push_result). Consumer: F,
 * in a critical section. The ring indices are only touched under those masks. */
static struct pf_result ring[PF_RING_LEN];
static volatile uint8_t ring_head; /* oldest record */
static volatile uint8_t ring_count;
static PF_FLAG lost_flag; /* a result was lost since the last stored one */
static uint16_t edge_tag;          /* F only: edge results reported so far */
/* FIRE tags, in the order of the FIRE records in the ring. Producer R, consumer F (critical
 * section). A FIRE that finds this FIFO full is lost like a result that finds the ring full. */
#if PF_FIRE_TAGS == 1
/* One FIRE at a time (8051): a bit and the tag, no FIFO indices. */
static uint16_t fire_tag;
static PF_FLAG fire_full;
#define FIRE_FULL() (fire_full)
#define FIRE_TAG() (fire_tag)
#else
static uint16_t fire_tags[PF_FIRE_TAGS];
static volatile uint8_t fire_head;
static volatile uint8_t fire_count;
#define FIRE_FULL() (fire_count == PF_FIRE_TAGS)
#define FIRE_TAG() (fire_tags[fire_head])
#endif

/* Interrupts masked. */
static void push_result(uint8_t info, const struct pf_stamp PF_RAM *s)
{
    uint8_t i;

    if (ring_count == PF_RING_LEN || ((info & PF_INFO_FIRE) && FIRE_FULL())) {
        counters[PF_C_OVERFLOWS]++;
        lost_flag = 1;
        return;
    }
    i = (uint8_t)(ring_head + ring_count);
    if (i >= PF_RING_LEN)
        i -= PF_RING_LEN;
    if (lost_flag)
        info |= PF_INFO_LOST;
    if (s->carry)
        info |= PF_INFO_CARRY;
    ring[i].info = info;
    ring[i].tc_lo = s->tc_lo;
    ring[i].counts = s->counts;
    ring_count++;
    lost_flag = 0;
    board_leds_write((uint8_t)(1u << (info & PF_INFO_ID)));
}

#ifdef PF_STAMP_IN_RING
/* E (the 8051's foreground poll) */
struct pf_stamp PF_RAM *pf_event_slot(void)
{
    uint8_t i;

    if (ring_count == PF_RING_LEN) {
        counters[PF_C_OVERFLOWS]++;
        lost_flag = 1;
        return 0;
    }
    i = (uint8_t)(ring_head + ring_count);
    if (i >= PF_RING_LEN)
        i -= PF_RING_LEN;
    return (struct pf_stamp PF_RAM *)&ring[i];
}

/* E, right after the board filled the record pf_event_slot gave it. */
void pf_event_commit(uint8_t info)
{
    struct pf_result PF_RAM *r;
    uint8_t i = (uint8_t)(ring_head + ring_count);

    if (i >= PF_RING_LEN)
        i -= PF_RING_LEN;
    r = &ring[i];
    if (r->info) /* the stamp's carry */
        info |= PF_INFO_CARRY;
    if (lost_flag)
        info |= PF_INFO_LOST;
    r->info = info;
    ring_count++;
    lost_flag = 0;
    board_leds_write((uint8_t)(1u << (info & PF_INFO_ID)));
}
#endif

void pf_init(void)
{
    uint8_t i;

    tc_ext = 0;
    pf_tc_next = 1;
    tc_pending = 0;
    hello_pending = 1; /* HELLO at boot, seq 0 */
    counters_pending = 0;
    tx_busy = 0;
    tx_lone_delim = 1; /* flushes whatever the receiver holds (SPEC.md section 6) */
    seq = 0;
#ifndef PF_FOREGROUND_IO
    tc_ahead = AHEAD_NONE;
    tc_started = 0;
#endif
    ring_head = 0;
    ring_count = 0;
    lost_flag = 0;
    edge_tag = 0;
#if PF_FIRE_TAGS == 1
    fire_full = 0;
#else
    fire_head = 0;
    fire_count = 0;
#endif
    for (i = 0; i < PF_C_N; i++)
        counters[i] = 0;
    mm_dec_init(&dec);
    tx_crc = 0;
#ifdef PF_RESULT_LIVE
    tx_tc = 0;
    tx_res = 0;
#endif
#ifdef PF_FOREGROUND_IO
    rx_frame = 0;
    pf_tc_armed = 0;
    pf_tc_isr = 0;
    tc_arming = 0;
#endif
}

void pf_led_post(void)
{
    uint8_t i;

    for (i = 0; i < 8; i++) {
        board_leds_write((uint8_t)(1u << i));
        board_delay_ms(PF_POST_MS);
    }
    board_leds_write(0);
}

#ifdef PF_FOREGROUND_IO
/* F: the Timer0 ISR sent the first byte of the TIMECODE prepared ahead, with the tick it was for. The
 * line is F's again no earlier than that byte's TI (a character time: 960 machine cycles at 9600
 * baud), and every path that could start a frame or touch TI meanwhile (pf_tx_next, tick_sync, the
 * take-back in pf_service) looks at pf_tc_isr first. tc_ext catches up with that tick here, and the
 * body becomes tc_ext itself: the same bytes (tick_sync leaves tc_ext alone while tx_tc). */
static void tc_take(void)
{
    pf_tc_isr = 0;
    tc_arming = 0;
    tx_busy = 1;
    tx_tc = 1;
    enc.body = PF_BODY_TIMECODE;
    tc_ext++;
    seq++;
}

/* F, line idle and nothing to send: one step of preparing TIMECODE(tc_ext + 1, seq) in enc. Armed
 * only if no tick came since tick_sync (which drops a stale preparation): with interrupts masked, as
 * T reads pf_tc_armed. */
static void arm_step(void)
{
    int16_t b;

    if (!tc_arming) {
        mm_enc_begin(&enc, MM_T_TIMECODE, seq, PF_BODY_TC_NEXT, MM_TIMECODE_LEN);
        tc_arming = 1;
        tc_arm_crc = 1;
        return;
    }
    if (tc_arm_crc) {
        tc_arm_crc = mm_enc_crc_step(&enc);
        return;
    }
    b = mm_enc_step(&enc);
    if (b == MM_ENC_AGAIN)
        return;
    pf_tc_first = (uint8_t)b;
    PF_CRIT_ENTER();
    if ((uint8_t)(pf_tc_next - 1u) == (uint8_t)tc_ext)
        pf_tc_armed = 1;
    else
        tc_arming = 0;
    PF_CRIT_EXIT();
}

/* F: catches up with the ticks the tick ISR counted in pf_tc_next (it runs far more often than every
 * 256 ticks). Same bookkeeping as pf_tick, for d ticks at once. */
static void tick_sync(void)
{
    uint8_t d = (uint8_t)((uint8_t)(pf_tc_next - 1u) - (uint8_t)tc_ext);

    /* After d: a tick whose TIMECODE the ISR sent may come before or after d was read, and tc_take
     * counts it either way (a tick after d and before this test would be counted twice else). */
    if (pf_tc_isr) {
        tc_take();
        return;       /* any other tick: next call */
    }
    if (d == 0)
        return;
    if (tx_tc)
        return;       /* tc_ext is the body of the TIMECODE frame on the line */
    tc_ext += d;
    tc_arming = 0;    /* a TIMECODE being prepared ahead is for the tick that just came: again */
    if (!tc_pending)
        d--;
    counters[PF_C_TICKS_MISSED] += d;
    tc_pending = 1;
}
#endif

#ifndef PF_FOREGROUND_IO
/* T, before the port write: the first byte of this tick's TIMECODE frame if the transmitter is idle
 * and the frame was encoded ahead; the frame is then on its way (the board writes the byte right after
 * the port write and lets X go on). Else -1: pf_tick decides. tx_lone_delim is only set before the
 * first frame (HELLO, which F starts before it arms), so the byte never goes out before that 0x00. */
int16_t pf_tick_tx(void)
{
    if (tc_ahead != AHEAD_ARMED || tx_busy || tx_lone_delim)
        return -1;
    tc_ahead = AHEAD_SENDING;
    tc_pos = 1;
    tx_busy = 1;
    seq++;
    tc_started = 1;
    return tc_wire[0];
}

/* T, right after the port write */
void pf_tick(void)
{
    tc_ext++;
    pf_tc_next = (uint8_t)((uint8_t)tc_ext + 1u);
    if (tc_pending || tc_ahead == AHEAD_DUE)
        counters[PF_C_TICKS_MISSED]++; /* the previous tick's TIMECODE never left */
    if (tc_started) {
        tc_started = 0;                /* pf_tick_tx started this tick's frame */
        tc_pending = 0;
        return;
    }
    if (tc_ahead == AHEAD_ARMED) {     /* (ARMED implies F is not building a frame: tx_crc 0) */
        tc_pending = 0;
        if (tx_busy) {
            tc_ahead = AHEAD_DUE;      /* right after the frame on the line (pf_tx_next) */
        } else {
            /* A board without pf_tick_tx (the host tests), or one whose transmitter was not free */
            tc_ahead = AHEAD_SENDING;
            tc_pos = 0;
            tx_busy = 1;
            seq++;
            board_uart_kick_tx();
        }
        return;
    }
    if (tc_ahead == AHEAD_DUE)
        tc_ahead = AHEAD_NONE;         /* stale: F builds the new timecode's frame */
    tc_pending = 1;                    /* not encoded ahead (or still on the line): F's path */
}
#endif

#ifndef PF_STAMP_IN_RING
/* E (interrupts masked) */
void pf_event(uint8_t id, uint8_t level, const struct pf_stamp PF_RAM *s)
{
    push_result((uint8_t)((id & PF_INFO_ID) | (level ? PF_INFO_STROBE : 0)), s);
}
#endif

/* E (interrupts masked) */
void pf_spurious(void)
{
    counters[PF_C_SPURIOUS]++;
}

#ifndef PF_COUNTERS_LIVE
/* R (the RX ISR, before pf_rx_byte for the byte it read): the UART overwrote a byte the core had not
 * read yet. counters[] is volatile and read by F in a critical section (see its definition). */
void pf_rx_overrun(void)
{
    counters[PF_C_RX_HW_OVERRUN]++;
}
#endif

static void handle_frame(void)
{
    uint8_t len = (uint8_t)mm_dec_payload_len(&dec);
    const uint8_t MM_RAM *b = dec.buf + MM_HDR_LEN;

    if (mm_msg_check(dec.buf, len) != MM_MSG_OK) {
        counters[PF_C_RX_BAD_MESSAGE]++;
        return;
    }
    counters[PF_C_RX_OK]++;
    switch (dec.buf[MM_HDR_TYPE]) {
    case MM_T_FIRE:
        if (b[MM_FIRE_EVENT_ID] > 7u) {
            counters[PF_C_RX_BAD_MESSAGE]++; /* BAD_VALUE: dropped like a malformed frame */
            return;
        }
        counters[PF_C_FIRE_FRAMES]++;
#if PF_FIRE_TAGS == 1
        if (!fire_full && ring_count != PF_RING_LEN) {
            fire_tag = (uint16_t)(b[MM_FIRE_TAG] | ((uint16_t)b[MM_FIRE_TAG + 1] << 8));
            push_result((uint8_t)(b[MM_FIRE_EVENT_ID] | PF_INFO_FIRE), &rx_stamp);
            fire_full = 1;
        } else {
#else
        /* Room in the ring first, as above: the tag is queued only with its record (issue 18: a
         * FIRE dropped by a full ring left its tag behind, so later RESULTs carried the previous
         * FIRE's tag and PF_FIRE_TAGS such drops lost every FIRE until reset). No other producer
         * runs between this check and push_result: R runs with interrupts masked, and F only
         * makes room. */
        if (fire_count != PF_FIRE_TAGS && ring_count != PF_RING_LEN) {
            uint8_t i = (uint8_t)(fire_head + fire_count);
            if (i >= PF_FIRE_TAGS)
                i -= PF_FIRE_TAGS;
            fire_tags[i] = (uint16_t)(b[MM_FIRE_TAG] | ((uint16_t)b[MM_FIRE_TAG + 1] << 8));
            push_result((uint8_t)(b[MM_FIRE_EVENT_ID] | PF_INFO_FIRE), &rx_stamp);
            fire_count++;
        } else {
#endif
            /* No room for the record or its tag: push_result counts it lost (OVERFLOWS, LOST_BEFORE
             * on the next stored record) like any result that finds the ring full. */
            push_result((uint8_t)(b[MM_FIRE_EVENT_ID] | PF_INFO_FIRE), &rx_stamp);
        }
        break;
    case MM_T_QUERY:
        if (b[MM_QUERY_WHAT] == MM_T_HELLO)
            hello_pending = 1;
        else if (b[MM_QUERY_WHAT] == MM_T_COUNTERS)
            counters_pending = 1;
        /* anything else (e.g. STATUS, an executor message) is not ours: ignored */
        break;
    default:
        break; /* valid frames of other types are not for the profiler: ignored */
    }
}

/* R (an ISR: interrupts of the same level are masked) */
void pf_rx_byte(uint8_t byte)
{
    uint8_t r;

    /* Timestamp the first byte of a frame before the decoder sees it (SPEC.md 0x12 FIRE): the
     * receive interrupt comes one character after the start bit began. */
#ifdef PF_FOREGROUND_IO
    if (mm_dec_at_frame_start(&dec) && byte != 0)
        board_rx_stamp(&rx_stamp); /* the board took the time when the byte arrived */
#else
    if (mm_dec_at_frame_start(&dec) && byte != 0)
        board_stamp_back(&rx_stamp, PF_CHAR_COUNTS);
#endif
    r = mm_dec_push(&dec, byte);
    switch (r) {
    case MM_DEC_FRAME:
#ifdef PF_FOREGROUND_IO
        rx_frame = 1; /* next pf_service call; the next byte comes a character time later */
#else
        handle_frame();
#endif
        break;
    case MM_DEC_TOO_LONG:
        counters[PF_C_RX_TOO_LONG]++;
        break;
    case MM_DEC_BAD_COBS:
        counters[PF_C_RX_BAD_COBS]++;
        break;
    case MM_DEC_TOO_SHORT:
        counters[PF_C_RX_TOO_SHORT]++;
        break;
    case MM_DEC_BAD_CRC:
        counters[PF_C_RX_BAD_CRC]++;
        break;
    default:
        break;
    }
}

/* X */
int16_t pf_tx_next(void)
{
    int16_t b;

    if (tx_lone_delim) {
        tx_lone_delim = 0;
        return 0;
    }
#ifdef PF_FOREGROUND_IO
    if (pf_tc_isr)
        tc_take();    /* its first byte is out: this is its TI */
#endif
    if (!tx_busy)
        return -1;
#ifdef PF_FOREGROUND_IO
    b = mm_enc_step(&enc);
#ifdef PF_RESULT_LIVE
    if (b == -1) {
        tx_tc = 0;
        if (tx_res) {
            tx_res = 0;
            pop_result();
        }
    }
#endif
#else
    if (tc_ahead == AHEAD_SENDING) {   /* the TIMECODE encoded ahead */
        if (tc_pos != sizeof tc_wire)
            return tc_wire[tc_pos++];
        tc_ahead = AHEAD_NONE;         /* F arms the next one */
        tx_busy = 0;
        return -1;
    }
    b = mm_enc_next(&enc);
    if (b == -1 && tc_ahead == AHEAD_DUE) {
        tc_ahead = AHEAD_SENDING;      /* the tick's TIMECODE, right after the frame that was out */
        tc_pos = 1;
        seq++;
        return tc_wire[0];
    }
#endif
    if (b == -1)          /* (not MM_ENC_AGAIN: the frame goes on) */
        tx_busy = 0;
    return b;
}

#ifndef PF_RESULT_LIVE
static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; /* no call: a leaf function, whose parameters SDCC may overlay */
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
#endif

#ifdef PF_RESULT_LIVE
/* F: drops the oldest record, whose RESULT frame has been sent. */
static void pop_result(void)
{
    if (ring[ring_head].info & PF_INFO_FIRE) {
#if PF_FIRE_TAGS == 1
        fire_full = 0;
#else
        fire_head = (uint8_t)(fire_head + 1u == PF_FIRE_TAGS ? 0 : fire_head + 1u);
        fire_count--;
#endif
    } else {
        edge_tag++;
    }
    ring_head = (uint8_t)(ring_head + 1u == PF_RING_LEN ? 0 : ring_head + 1u);
    ring_count--;
}

/* The encoder's body bytes (MM_ENC_BODY_FN): from memory, or (body == 0) byte k of the RESULT body
 * of the oldest ring record. Everything it reads stays unchanged until that frame is sent: the
 * record and its tag are popped only then, and tc_ext - d does not change as tc_ext advances (the
 * record is less than 256 ticks old). */
uint8_t pf_enc_body(uint8_t body, uint8_t k)
{
    uint8_t info;
    uint32_t tc;

    switch (body) {
    case PF_BODY_TIMECODE:
        return ((const uint8_t *)&tc_ext)[k];
#ifdef PF_FOREGROUND_IO
    case PF_BODY_TC_NEXT:
        tc = tc_ext + 1u;
        return ((const uint8_t *)&tc)[k];
#endif
    case PF_BODY_HELLO:
        return hello_body[k];
    case PF_BODY_COUNTERS: /* tx_dropped (body bytes 12, 13) is not stored: always 0 */
        /* Neither are rx_ring_overflow and rx_hw_overrun (22 .. 25): no ring, and the 8051's UART has
         * no overrun flag (README.md). Version 1 ended at 22: these bytes were read past counters[]. */
        if (k >= MM_COUNTERS_RX_RING_OVERFLOW)
            return 0;
        if (k >= MM_COUNTERS_TX_DROPPED + 2u)
            k -= 2u;
        else if (k >= MM_COUNTERS_TX_DROPPED)
            return 0;
        return ((const uint8_t *)counters)[k];
    default:
        break;
    }
    info = ring[ring_head].info;
    switch (k) {
    case MM_RESULT_EVENT_ID:
        return (uint8_t)(info & PF_INFO_ID);
    case MM_RESULT_FLAGS:
        return (uint8_t)(((info & PF_INFO_FIRE) ? MM_RESULT_FLAG_FIRE : 0) |
                         ((info & PF_INFO_LOST) ? MM_RESULT_FLAG_LOST_BEFORE : 0) |
                         ((info & PF_INFO_STROBE) ? MM_RESULT_FLAG_STROBE : 0));
    case MM_RESULT_TAG:
        return (uint8_t)((info & PF_INFO_FIRE) ? FIRE_TAG() : edge_tag);
    case MM_RESULT_TAG + 1:
        return (uint8_t)(((info & PF_INFO_FIRE) ? FIRE_TAG() : edge_tag) >> 8);
    case MM_RESULT_COUNTS:
        return (uint8_t)ring[ring_head].counts;
    case MM_RESULT_COUNTS + 1:
        return (uint8_t)(ring[ring_head].counts >> 8);
    case MM_RESULT_COUNTS + 2:
        return (uint8_t)((info & PF_INFO_CARRY) ? 1 : 0);
    case MM_RESULT_COUNTS + 3:
        return 0;
    default: /* MM_RESULT_TIMECODE .. + 3 */
        tc = tc_ext - (uint8_t)((uint8_t)tc_ext - ring[ring_head].tc_lo);
        k -= MM_RESULT_TIMECODE;
        while (k--)
            tc >>= 8;
        return (uint8_t)tc;
    }
}
#else
/* F: pops the oldest record into tx_body as a RESULT body. */
static void build_result(void)
{
    uint8_t info;
    uint8_t d;
    uint16_t tag;

    PF_CRIT_ENTER();
    info = ring[ring_head].info;
    /* The record keeps the timecode's low byte; it waited less than 256 ticks (18 s). */
    d = (uint8_t)((uint8_t)tc_ext - ring[ring_head].tc_lo);
    put_u32(tx_body + MM_RESULT_TIMECODE, tc_ext - d);
    put_u32(tx_body + MM_RESULT_COUNTS, ring[ring_head].counts);
    ring_head = (uint8_t)(ring_head + 1u == PF_RING_LEN ? 0 : ring_head + 1u);
    ring_count--;
    if (info & PF_INFO_FIRE) {
        tag = fire_tags[fire_head];
        fire_head = (uint8_t)(fire_head + 1u == PF_FIRE_TAGS ? 0 : fire_head + 1u);
        fire_count--;
    } else {
        tag = edge_tag++;
    }
    PF_CRIT_EXIT();
    if (info & PF_INFO_CARRY)
        tx_body[MM_RESULT_COUNTS + 2] = 1; /* counts < 2^17: the 17th bit of a 16-bit record */
    tx_body[MM_RESULT_EVENT_ID] = (uint8_t)(info & PF_INFO_ID);
    tx_body[MM_RESULT_FLAGS] = (uint8_t)(((info & PF_INFO_FIRE) ? MM_RESULT_FLAG_FIRE : 0) |
                                         ((info & PF_INFO_LOST) ? MM_RESULT_FLAG_LOST_BEFORE : 0) |
                                         ((info & PF_INFO_STROBE) ? MM_RESULT_FLAG_STROBE : 0));
    put_u16(tx_body + MM_RESULT_TAG, tag);
}
#endif

#ifndef PF_FOREGROUND_IO
/* F: encodes TIMECODE(tc_ext + 1, seq) into tc_wire and arms it (tc_ahead is NONE: F owns tc_wire and
 * seq). With the protocol's encoder, 1864 cycles (116 us) on the AVR (measured in simavr), once after
 * each frame, in the foreground: interrupts stay on but for the two short critical sections, and a
 * frame it delays (an event's RESULT) is only later on the line, its timestamp unchanged. Returns 0 if
 * a tick came meanwhile (tc_ext moved: the frame would be one tick late); the caller tries again. */
PF_NOINLINE static uint8_t ahead_arm(void)
{
    struct mm_enc e;
    uint8_t body[MM_TIMECODE_LEN];
    uint32_t tc;
    uint8_t i;
    uint8_t ok;

    PF_CRIT_ENTER();
    tc = tc_ext;
    PF_CRIT_EXIT();
    put_u32(body + MM_TIMECODE_TIMECODE, tc + 1u);
    mm_enc_start(&e, MM_T_TIMECODE, seq, body, MM_TIMECODE_LEN);
    for (i = 0; i < sizeof tc_wire; i++) /* n + 6 bytes for a body of n (SPEC.md section 2) */
        tc_wire[i] = (uint8_t)mm_enc_next(&e);
    PF_CRIT_ENTER();
    ok = (uint8_t)(tc_ext == tc);
    if (ok)
        tc_ahead = AHEAD_ARMED;
    PF_CRIT_EXIT();
    return ok;
}
#endif

/* F */
uint8_t pf_service(void)
{
    uint8_t type;
    uint8_t len;
    pf_body_t body;
#ifndef PF_COUNTERS_LIVE
    uint8_t i;
#endif
#ifndef PF_FOREGROUND_IO
    uint8_t busy;
#endif

#ifdef PF_FOREGROUND_IO
    tick_sync();
    if (rx_frame) {
        rx_frame = 0;
        handle_frame();
        return 1;
    }
#endif
    if (tx_crc) {
        if (!mm_enc_crc_step(&enc)) {
            tx_crc = 0;
            tx_busy = 1;
            board_uart_kick_tx();
        }
        return 1;
    }
#ifdef PF_FOREGROUND_IO
    if (tx_busy)
        return 0;
    if (!(tc_pending | hello_pending | counters_pending) && ring_count == 0) {
        if (pf_tc_armed || pf_tc_isr)
            return 0; /* armed, or (a tick since tick_sync) just taken by the tick: not again */
        arm_step();   /* nothing to send: the next TIMECODE ahead */
        return 1;
    }
    /* A frame to start: it needs enc and seq, so take the TIMECODE ahead back first. */
    pf_tc_armed = 0;
    if (pf_tc_isr)
        return 1;     /* the tick took it just before: tick_sync takes it over next call */
    tc_arming = 0;
#else
    if (tx_busy || !(tc_pending | hello_pending | counters_pending | ring_count)) {
        /* Nothing to start: encode the next TIMECODE ahead (also while a frame is on the line:
         * tc_wire is not the encoder's). */
        if (tc_ahead == AHEAD_NONE) {
            (void)ahead_arm();
            return 1;
        }
        return 0;
    }
    /* A frame to start: it takes seq, so take the armed TIMECODE back first (it is armed again with
     * the next seq afterwards). With interrupts masked: a tick may have started it just now. */
    PF_CRIT_ENTER();
    busy = tx_busy;
    if (!busy)
        tc_ahead = AHEAD_NONE; /* (ARMED or NONE: DUE and SENDING come with tx_busy) */
    PF_CRIT_EXIT();
    if (busy)
        return 1;              /* the tick started its TIMECODE: the frame waits for the line */
#endif
    if (tc_pending) {
#ifdef PF_RESULT_LIVE
        tc_pending = 0;
        tx_tc = 1;
#else
        PF_CRIT_ENTER();
        put_u32(tx_body + MM_TIMECODE_TIMECODE, tc_ext);
        tc_pending = 0;
        PF_CRIT_EXIT();
#endif
        body = PF_BODY_TIMECODE;
        type = MM_T_TIMECODE;
        len = MM_TIMECODE_LEN;
    } else if (hello_pending) {
        hello_pending = 0;
#if !defined(PF_RESET_CAUSE) && !defined(PF_RESULT_LIVE)
        for (i = 0; i < MM_HELLO_LEN; i++) /* tx_body is free: no frame is on the line (tx_busy 0) */
            tx_body[i] = hello_body[i];
        tx_body[MM_HELLO_RESET_CAUSE] = board_reset_cause();
#endif
        body = PF_BODY_HELLO;
        type = MM_T_HELLO;
        len = MM_HELLO_LEN;
    } else if (counters_pending) {
        counters_pending = 0;
#ifdef PF_COUNTERS_LIVE
        /* 8051: no RAM for a 22-byte copy. pf_enc_body reads the live counters (little-endian
         * u16 in body order, tx_dropped left out); an increment while the frame is on the line
         * makes it fail its CRC at the receiver, which asks again. */
#else
        PF_CRIT_ENTER();
        for (i = 0; i < PF_C_N; i++)
            put_u16(tx_body + 2u * i, counters[i]);
        PF_CRIT_EXIT();
#endif
        body = PF_BODY_COUNTERS;
        type = MM_T_COUNTERS;
        len = MM_COUNTERS_LEN;
    } else if (ring_count != 0) {
#ifdef PF_RESULT_LIVE
        tx_res = 1;
#else
        build_result();
#endif
        body = PF_BODY_RESULT;
        type = MM_T_RESULT;
        len = MM_RESULT_LEN;
    } else {
        return 0;
    }
    mm_enc_begin(&enc, type, seq, body, len);
    seq++;
    tx_crc = 1; /* the CRC, a byte per call, then the kick */
    return 1;
}

/* F, interrupts masked */
uint8_t pf_has_work(void)
{
    if (tx_crc)
        return 1;
#ifndef PF_FOREGROUND_IO
    if (tc_ahead == AHEAD_NONE)
        return 1;     /* the next TIMECODE to encode ahead */
#endif
    if (tx_busy)
        return 0;
#ifdef PF_FOREGROUND_IO
    if (!pf_tc_armed)
        return 1;     /* the next TIMECODE to prepare ahead */
#endif
    return (uint8_t)(tc_pending | hello_pending | counters_pending | ring_count);
}

#ifndef __SDCC_mcs51 /* introspection for the host tests; unused on the 8051 */
uint32_t pf_timecode(void)
{
    uint32_t t;

    PF_CRIT_ENTER();
    t = tc_ext;
    PF_CRIT_EXIT();
    return t;
}

uint16_t pf_counter(uint8_t idx)
{
    uint16_t v;

    PF_CRIT_ENTER();
    v = counters[idx];
    PF_CRIT_EXIT();
    return v;
}

uint8_t pf_ring_count(void)
{
    return ring_count;
}
#endif

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

#if defined(__SDCC_mcs51)
#pragma nooverlay /* functions here run in ISRs: their locals must not share memory with main's */
#endif

#define U32LE(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((uint32_t)(v) >> 24)

/* HELLO body: constant, so it lives in code memory on the 8051 (the encoder takes a generic
 * pointer). Layout: SPEC.md section 5, 0x01 HELLO. */
static const uint8_t MM_ROM hello_body[MM_HELLO_LEN] = {
    MM_PROTO_VERSION, MM_NODE_PROFILER, (uint8_t)PF_FW_VERSION, (uint8_t)(PF_FW_VERSION >> 8),
    U32LE(PF_CPU_HZ), U32LE(PF_TIMER_HZ), U32LE(PF_TICK_COUNTS), U32LE(PF_BAUD), PF_HELLO_FLAGS,
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
static uint8_t seq;           /* F only */
static struct mm_enc MM_RAM enc; /* F (start) and X (next), never at once: see tx_busy */
/* Frame bodies built in RAM: TIMECODE and RESULT (COUNTERS too unless PF_COUNTERS_LIVE). */
#ifdef PF_COUNTERS_LIVE
static uint8_t tx_body[MM_RESULT_LEN];
#else
static uint8_t tx_body[MM_COUNTERS_LEN];
#endif

static struct mm_dec MM_RAM dec;    /* R only */
static struct pf_stamp rx_stamp;    /* R only: time of the current frame's first byte */

/* Counters, in COUNTERS body order. Incremented by R, T, E (with interrupts masked where E is the
 * foreground) and F; read by F in a critical section. volatile: ISRs change them. */
static volatile uint16_t counters[PF_C_N];

/* Result ring. Producers: E and R (FIRE), always with interrupts masked (push_result). Consumer: F,
 * in a critical section. The ring indices are only touched under those masks. */
static struct pf_result ring[PF_RING_LEN];
static volatile uint8_t ring_head; /* oldest record */
static volatile uint8_t ring_count;
static PF_FLAG lost_flag; /* a result was lost since the last stored one */
static uint16_t edge_tag;          /* F only: edge results reported so far */
/* FIRE tags, in the order of the FIRE records in the ring. Producer R, consumer F (critical
 * section). A FIRE that finds this FIFO full is lost like a result that finds the ring full. */
static uint16_t fire_tags[PF_FIRE_TAGS];
static volatile uint8_t fire_head;
static volatile uint8_t fire_count;

/* Interrupts masked. */
static void push_result(uint8_t info, const struct pf_stamp *s)
{
    uint8_t i;

    if (ring_count == PF_RING_LEN || ((info & PF_INFO_FIRE) && fire_count == PF_FIRE_TAGS)) {
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
    ring_head = 0;
    ring_count = 0;
    lost_flag = 0;
    edge_tag = 0;
    fire_head = 0;
    fire_count = 0;
    for (i = 0; i < PF_C_N; i++)
        counters[i] = 0;
    mm_dec_init(&dec);
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

/* T */
void pf_tick(void)
{
    tc_ext++;
    pf_tc_next = (uint8_t)((uint8_t)tc_ext + 1u);
    if (tc_pending)
        counters[PF_C_TICKS_MISSED]++; /* the previous tick's TIMECODE never left */
    tc_pending = 1;
}

/* E (interrupts masked) */
void pf_event(uint8_t id, uint8_t level, const struct pf_stamp *s)
{
    push_result((uint8_t)((id & PF_INFO_ID) | (level ? PF_INFO_STROBE : 0)), s);
}

/* E (interrupts masked) */
void pf_spurious(void)
{
    counters[PF_C_SPURIOUS]++;
}

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
        if (fire_count != PF_FIRE_TAGS) {
            uint8_t i = (uint8_t)(fire_head + fire_count);
            if (i >= PF_FIRE_TAGS)
                i -= PF_FIRE_TAGS;
            fire_tags[i] = (uint16_t)(b[MM_FIRE_TAG] | ((uint16_t)b[MM_FIRE_TAG + 1] << 8));
            push_result((uint8_t)(b[MM_FIRE_EVENT_ID] | PF_INFO_FIRE), &rx_stamp);
            fire_count++;
        } else {
            push_result((uint8_t)(b[MM_FIRE_EVENT_ID] | PF_INFO_FIRE), &rx_stamp); /* counted lost */
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
    if (mm_dec_at_frame_start(&dec) && byte != 0)
        board_stamp_back(&rx_stamp, PF_CHAR_COUNTS);
    r = mm_dec_push(&dec, byte);
    switch (r) {
    case MM_DEC_FRAME:
        handle_frame();
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
    b = mm_enc_next(&enc);
    if (b < 0)
        tx_busy = 0;
    return b;
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    put_u16(p, (uint16_t)v);
    put_u16(p + 2, (uint16_t)(v >> 16));
}

/* F: pops the oldest record into tx_body as a RESULT body. */
static void build_result(void)
{
    uint8_t info;
    uint8_t d;
    uint16_t tag;
    const struct pf_result *r;

    PF_CRIT_ENTER();
    r = &ring[ring_head];
    info = r->info;
    /* The record keeps the timecode's low byte; it waited less than 256 ticks (18 s). */
    d = (uint8_t)((uint8_t)tc_ext - r->tc_lo);
    put_u32(tx_body + MM_RESULT_TIMECODE, tc_ext - d);
    put_u32(tx_body + MM_RESULT_COUNTS, r->counts);
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

/* F */
uint8_t pf_service(void)
{
    uint8_t type;
    uint8_t len;
    const uint8_t *body = tx_body;
#ifndef PF_COUNTERS_LIVE
    uint8_t i;
#endif

    if (tx_busy)
        return 0;
    if (tc_pending) {
        PF_CRIT_ENTER();
        put_u32(tx_body + MM_TIMECODE_TIMECODE, tc_ext);
        tc_pending = 0;
        PF_CRIT_EXIT();
        type = MM_T_TIMECODE;
        len = MM_TIMECODE_LEN;
    } else if (hello_pending) {
        hello_pending = 0;
        body = hello_body;
        type = MM_T_HELLO;
        len = MM_HELLO_LEN;
    } else if (counters_pending) {
        counters_pending = 0;
#ifdef PF_COUNTERS_LIVE
        /* 8051: no RAM for a 22-byte copy. The counters array is already the COUNTERS body
         * (little-endian u16 in body order); an increment while the frame is on the line makes
         * it fail its CRC at the receiver, which asks again. */
        body = (const uint8_t *)counters;
#else
        PF_CRIT_ENTER();
        for (i = 0; i < PF_C_N; i++)
            put_u16(tx_body + 2u * i, counters[i]);
        PF_CRIT_EXIT();
#endif
        type = MM_T_COUNTERS;
        len = MM_COUNTERS_LEN;
    } else if (ring_count != 0) {
        build_result();
        type = MM_T_RESULT;
        len = MM_RESULT_LEN;
    } else {
        return 0;
    }
    mm_enc_start(&enc, type, seq, body, len);
    seq++;
    tx_busy = 1;
    board_uart_kick_tx();
    return 1;
}

/* F, interrupts masked */
uint8_t pf_has_work(void)
{
    if (tx_busy)
        return 0;
    return (uint8_t)(tc_pending | hello_pending | counters_pending | ring_count);
}

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

/* Message-level checks (SPEC.md sections 5 and 6). */
#include "mmproto.h"

#if defined(__SDCC_mcs51) && defined(MM_ISR_SAFE)
#pragma nooverlay /* may run in an ISR: see mmproto.h */
#endif

/* The table goes to code memory: __code via MM_ROM on the 8051; on the AVR, const data would be
 * copied to RAM at start-up unless it is PROGMEM, which then needs pgm_read_byte. */
#if defined(__AVR__)
#include <avr/pgmspace.h>
#define TABLE_ROM PROGMEM
#define TABLE_READ(t, i) pgm_read_byte(&(t)[i])
#else
#define TABLE_ROM
#define TABLE_READ(t, i) ((t)[i])
#endif

/* Body lengths indexed by ((type >> 1) & 0x18) | (type & 0x07) for 0x00..0x07, 0x10..0x17 and
 * 0x20..0x27, and by 24 + (type & 0x07) for 0x28..0x2F (version 5: PERIODIC; version 6 adds 0x13..0x15): the known types are
 * 0x01..0x06, 0x10..0x15 and 0x20..0x28, so 32 bytes cover them without a search. 0 = unknown type. */
static const uint8_t MM_ROM body_len[32] TABLE_ROM = {
    0, MM_HELLO_LEN, MM_QUERY_LEN, MM_ERROR_LEN, MM_COUNTERS_LEN, MM_NOP_LEN, MM_BAUD_LEN, 0,
    MM_TIMECODE_LEN, MM_RESULT_LEN, MM_FIRE_LEN, MM_HIST_ARM_LEN, MM_HIST_SUMMARY_LEN, MM_HIST_CELLS_LEN, 0, 0,
    MM_SCHEDULE_LEN, MM_ACK_LEN, MM_MODE_LEN, MM_STATUS_LEN, MM_LOCAL_EVENT_LEN, MM_FIRED_LEN, MM_CANCEL_LEN,
    MM_CANCELLED_LEN, MM_PERIODIC_LEN, 0, 0, 0, 0, 0, 0, 0,
};

uint8_t mm_msg_body_len(uint8_t type)
{
    if (type >= 0x30u)
        return 0;
    if ((type & 0x08u) != 0) {
        if (type < 0x28u)
            return 0;
        type = (uint8_t)(0x18u | (type & 0x07u));
    } else {
        type = (uint8_t)(((type >> 1) & 0x18u) | (type & 0x07u)); /* 8-bit index: no 16-bit math */
    }
    return TABLE_READ(body_len, type);
}

uint8_t mm_msg_check(const uint8_t *payload, uint8_t len)
{
    uint8_t want;

    if (len < MM_HDR_LEN)
        return MM_MSG_BAD_LENGTH;
    want = mm_msg_body_len(payload[MM_HDR_TYPE]);
    if (want == 0)
        return MM_MSG_UNKNOWN_TYPE;
    if ((uint8_t)(len - MM_HDR_LEN) != want)
        return MM_MSG_BAD_LENGTH;
    return MM_MSG_OK;
}

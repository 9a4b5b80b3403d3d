/*
 * The event schedule list (paper Table 2): a fixed array kept ordered by timecode, earliest first;
 * events with the same timecode keep their arrival order. No heap: EX_LIST_CAPACITY entries.
 *
 * Timecodes are compared relative to the current extended timecode `now` ((uint32_t)(tc - now)), so
 * ordering and the past-due test stay right across the 32-bit wrap.
 */
#ifndef EX_LIST_H
#define EX_LIST_H

#include <stdint.h>

#ifndef EX_LIST_CAPACITY
#define EX_LIST_CAPACITY 16
#endif

#define EX_LIST_OK 0
#define EX_LIST_PAST_DUE 1  /* tc is not after now */
#define EX_LIST_DUPLICATE 2 /* tag already pending */
#define EX_LIST_FULL 3
#define EX_LIST_HORIZON 4   /* tc more than EX_LIST_HORIZON_TICKS after now */

/* SPEC.md SCHEDULE: a timecode more than this many ticks ahead is refused (ERROR HORIZON). Without
 * it, anything up to 2^31 ticks ahead was accepted, and 16 events for the far future (a scheduler bug,
 * a timecode from another run) filled the list for good. 32768 ticks is 39 minutes at 71.1 ms. */
#define EX_LIST_HORIZON_TICKS 32768ul

struct ex_entry {
    uint32_t tc;
    uint16_t tag;
    uint8_t id;
};

struct ex_list {
    struct ex_entry e[EX_LIST_CAPACITY];
    uint8_t n;
};

void ex_list_init(struct ex_list *l);
/* Checks in this order: past-due (tc - now is 0 or at least 2^31: not after now), horizon (more than
 * EX_LIST_HORIZON_TICKS ahead; the two ranges are disjoint), duplicate, full. So a request that names a
 * timecode it may never name is refused for that, whatever the list holds. */
uint8_t ex_list_insert(struct ex_list *l, uint16_t tag, uint8_t id, uint32_t tc, uint32_t now);
/* Number of leading entries due at `now` (tc not after now). */
uint8_t ex_list_due(const struct ex_list *l, uint32_t now);
/* Removes the first k entries. */
void ex_list_pop(struct ex_list *l, uint8_t k);
/* Removes the entry with this tag, if pending (tags are unique in the list); returns 1 if it did. The
 * order of the others is kept. */
uint8_t ex_list_remove(struct ex_list *l, uint16_t tag);

#endif

/*
 * Profiler histograms (see pf_hist.h; SPEC.md 0x13 HIST_ARM, 0x14 HIST_SUMMARY, 0x15 HIST_CELLS).
 * Context: F only (pf_service), so nothing here is volatile and nothing needs a critical section; the
 * core hands over the HIST_ARM and QUERY that R decoded, and every edge when it takes the edge's ring
 * record (pf_core.c, hist_step and build_result). The edge ISR is not made any longer by a histogram.
 *
 * Time is kept as (tick, counts into it), 0 <= counts < PF_TICK_COUNTS, so that a series may run for
 * any number of ticks with 32-bit arithmetic only: a moment is advanced by adding (ticks, counts) and
 * carrying, a difference of two times is formed only when their ticks are at most DT_MAX apart (else
 * it is clamped), and a cell is latency >> cell_shift. Divisions (32-bit) only at arm time and when a
 * run of missed events is skipped at once.
 *
 * Joining (SPEC.md 0x13, as the scheduler's matching.series_result): an edge of id i joins the event of
 * id i whose moment m is the latest at or before stamp + early. The events of one id are 8 periods
 * apart (p8), so event k's edges are those with m_k <= stamp + early < m_k + p8: each id keeps its next
 * event not yet joined or missed (ids[i]); an edge first counts missed every event of its id whose next
 * moment is at or before stamp + early, then joins the one left if its moment is at or before stamp +
 * early, else it is stray (its window has not opened: before the first moment's, or after an event
 * already taken). After the last event of an id its window ends the same way (m + p8), so an edge later
 * than that is stray, and a latency of a joined edge is always below 8 periods (< 8 ticks).
 */
#include "pf_hist.h"

#ifdef PF_HIST

#define TC ((uint32_t)PF_TICK_COUNTS)
#define NCELL (MM_HIST_CELLS + 1u)                            /* cells 0 .. 999 and the overflow cell */
#define NBLOCK ((NCELL + MM_HIST_BLOCK - 1u) / MM_HIST_BLOCK) /* 126: the last holds cell 1000 only */
#define NMAP ((NBLOCK + 7u) / 8u)                             /* a bit per block: 16 bytes */
/* Two times are compared as (dt ticks) * TC + counts only while |dt| <= DT_MAX, so that every d below
 * fits an int32_t with room for counts, early and two ticks more (1883 ticks at the AVR's 1137778); a time
 * further ahead is clamped to DT_MAX ticks, which is still more than 2 * 8 periods: skip() skips some
 * events and looks again. */
#define DT_MAX ((int32_t)(0x7FFFFFFFul / PF_TICK_COUNTS) - 4)
typedef char pf_hist_tick_fits[(PF_TICK_COUNTS >= 65536ul && 0x7FFFFFFFul / PF_TICK_COUNTS >= 20ul) ? 1 : -1];
#define D_NONE ((int32_t)(-0x7FFFFFFFl - 1))   /* skip(): no event left to join, or none near */

/* The next event of one id that is neither joined nor missed: its index k (>= count: none left) and
 * its moment, tick t and counts c into it (0 <= c < TC). 12 bytes per id. */
struct hist_id {
    uint32_t k;
    uint32_t t;
    uint32_t c;
};

/* The series (HIST_ARM) */
static uint8_t armed;          /* a series runs: edges are joined, reports are due */
static uint8_t raw;            /* its flags bit 0: edges still go out as RESULTs */
static uint8_t ended;          /* the last series ended (final report made or under way): figures complete */
static uint32_t count;
static uint32_t period8;       /* 8 * period: from one event of an id to the next of the same id */
static uint32_t p8t, p8c;      /* the same as ticks and counts (p8c < TC) */
static uint32_t late_bound;
static uint16_t early;
static uint8_t shift;
static uint8_t report_ticks;
static uint32_t next_report;   /* timecode of the next periodic report */
static uint32_t left;          /* events neither joined nor missed */
static struct hist_id ids[8];

/* The figures, cumulative since the HIST_ARM (HIST_SUMMARY). 4004 + 32 bytes of cells and maps. */
#ifndef PF_NOINIT
#define PF_NOINIT
#endif
static uint32_t cells[NCELL] PF_NOINIT; /* (pf_hist_init clears them: see PF_NOINIT in pf_board.h) */
static uint8_t dirty[NMAP];    /* blocks changed since they were last sent */
static uint8_t used[NMAP];     /* blocks with a count other than 0 */
static uint32_t n_ok, n_late, n_early, n_missed;
static uint16_t n_stray;
static uint32_t lat_min, lat_max, worst;
static uint32_t sum_lo;
static uint16_t sum_hi;
static uint16_t reports;       /* reports made since the HIST_ARM */

/* Reports asked for and not begun (bits), and the one under way. */
#define WANT_ANSWER 0x01u /* HIST_SUMMARY report 0, every count 0: the answer to a HIST_ARM */
#define WANT_FULL 0x02u   /* QUERY(what=0x14) */
#define WANT_FINAL 0x04u  /* the series' last event was joined or missed */
#define WANT_END 0x08u    /* HIST_ARM count 0 */
static uint8_t want;
#define REP_NONE 0
#define REP_CHANGED 1     /* the periodic report: the blocks changed since they were last sent */
#define REP_FULL 2        /* every block that is not 0 */
static uint8_t rep;
static uint8_t rep_block;      /* the next block to look at */
static uint8_t rep_blocks;     /* HIST_CELLS frames of this report so far */

uint8_t pf_hist_valid(const uint8_t *b)
{
    uint32_t period = mm_get_u32(b + MM_HIST_ARM_PERIOD);

    if (b[MM_HIST_ARM_EVENT_ID] > 7u)
        return 0;
    if (mm_get_u32(b + MM_HIST_ARM_COUNT) != 0 && (period == 0 || period >= TC))
        return 0;
    if (mm_get_u32(b + MM_HIST_ARM_FIRST) >= TC)
        return 0;
    if (b[MM_HIST_ARM_CELL_SHIFT] > 15u)
        return 0;
    return (uint8_t)(b[MM_HIST_ARM_REPORT_TICKS] != 0);
}

/* Every figure back to 0. Cells: only the blocks that were used (a few dozen in a run, not 4 KB). */
static void clear_figures(void)
{
    uint8_t b;
    uint8_t j;

    for (b = 0; b < NBLOCK; b++) {
        if (used[b >> 3] & (uint8_t)(1u << (b & 7u))) {
            for (j = 0; j < MM_HIST_BLOCK && (uint16_t)(b * MM_HIST_BLOCK + j) < NCELL; j++)
                cells[b * MM_HIST_BLOCK + j] = 0;
        }
    }
    for (b = 0; b < NMAP; b++) {
        dirty[b] = 0;
        used[b] = 0;
    }
    n_ok = n_late = n_early = n_missed = 0;
    n_stray = 0;
    lat_min = 0xFFFFFFFFul;
    lat_max = 0;
    worst = 0;
    sum_lo = 0;
    sum_hi = 0;
    reports = 0;
}

void pf_hist_init(void)
{
    uint16_t i;

    for (i = 0; i < NCELL; i++)  /* (pf_init runs more than once in the host tests) */
        cells[i] = 0;
    for (i = 0; i < NMAP; i++)
        used[i] = 0;
    clear_figures();
    armed = 0;
    raw = 0;
    ended = 0;
    count = 0;
    left = 0;
    want = 0;
    rep = REP_NONE;
}

/* The moment of s advanced by n events of its id (n * 8 periods); the caller makes sure an event is
 * left there (k + 8 n < count), else it marks the id done itself. */
static void advance(struct hist_id *s, uint32_t n)
{
    uint32_t a;

    s->k += n << 3;
    if (n == 1u) {
        s->t += p8t;
        s->c += p8c;
    } else {
        a = n * period8;  /* <= the d that asked for n (skip): below 2^31 */
        s->t += a / TC;
        s->c += a % TC;
    }
    if (s->c >= TC) {
        s->c -= TC;
        s->t++;
    }
}

/* Events of s from its next one on: k, k + 8, ... below count. */
static uint32_t remaining(const struct hist_id *s)
{
    return ((count - s->k - 1u) >> 3) + 1u;
}

/* s's next n events are done (joined or missed): k and the moment go on, or the id is done. */
static void step(struct hist_id *s, uint32_t n)
{
    left -= n;
    if (n >= remaining(s))
        s->k = count;  /* (not k + 8 n: that may wrap for a count near 2^32) */
    else
        advance(s, n);
}

/* Counts missed every event of s whose window has closed by x + off, that is whose id's next moment
 * is at or before x + off (x = (xt, xc)). Returns x + off - the moment of the first event left, or
 * D_NONE if none is left or it lies more than DT_MAX ticks after x. */
static int32_t skip(struct hist_id *s, uint32_t xt, uint32_t xc, int32_t off)
{
    int32_t dt;
    int32_t d;
    uint32_t n;
    uint32_t rem;

    for (;;) {
        if (s->k >= count)
            return D_NONE;
        dt = (int32_t)(xt - s->t);
        if (dt < -DT_MAX)
            return D_NONE;
        if (dt > DT_MAX)
            dt = DT_MAX; /* d is then a lower bound, and >= 2 * period8: skips, then looks again */
        d = dt * (int32_t)TC + (int32_t)xc - (int32_t)s->c + off;
        if (d < (int32_t)period8)
            return d;
        /* d / period8 events' windows have closed: one (the usual case: the executor missed one
         * event) without a division */
        n = ((uint32_t)d < 2u * period8) ? 1u : (uint32_t)d / period8;
        rem = remaining(s);
        if (n > rem)
            n = rem;
        n_missed += n;
        step(s, n);
    }
}

static void mark(uint16_t cell)
{
    uint8_t b = (uint8_t)(cell / MM_HIST_BLOCK);
    uint8_t m = (uint8_t)(1u << (b & 7u));

    dirty[b >> 3] |= m;
    used[b >> 3] |= m;
}

void pf_hist_edge(uint8_t id, uint32_t tc, uint32_t counts)
{
    struct hist_id *s = &ids[id & 7u];
    int32_t d;
    uint32_t lat;
    uint32_t cell;
    uint32_t sum;

    if (!armed)
        return;
    d = skip(s, tc, counts, (int32_t)early);
    if (d < 0) {
        if (n_stray != 0xFFFFu)
            n_stray++;
    } else {
        d -= (int32_t)early;  /* the latency */
        if (d < 0) {
            n_early++;
        } else {
            lat = (uint32_t)d;
            if (lat >= late_bound)
                n_late++;
            else
                n_ok++;
            cell = lat >> shift;
            if (cell > MM_HIST_CELLS)
                cell = MM_HIST_CELLS;  /* the overflow cell */
            cells[cell]++;
            mark((uint16_t)cell);
            if (lat < lat_min)
                lat_min = lat;
            if (lat > lat_max) {
                lat_max = lat;
                worst = s->k;
            }
            sum = sum_lo + lat;
            if (sum < sum_lo)
                sum_hi++;      /* the 48-bit sum's carry (wraps past 2^48: 4.9 h of 1 s latencies) */
            sum_lo = sum;
        }
        step(s, 1u);
    }
    if (left == 0)
        want |= WANT_FINAL;
}

void pf_hist_arm(const uint8_t *b, uint32_t now_tc)
{
    uint32_t t;
    uint32_t c;
    uint32_t period;
    uint8_t j;
    struct hist_id *s;

    rep = REP_NONE;                    /* a report under way is dropped: its summary never follows */
    if (mm_get_u32(b + MM_HIST_ARM_COUNT) == 0) {
        want = WANT_END;               /* the final full report, which ends the series */
        return;
    }
    clear_figures();
    count = mm_get_u32(b + MM_HIST_ARM_COUNT);
    left = count;
    period = mm_get_u32(b + MM_HIST_ARM_PERIOD);
    period8 = period << 3;             /* < 8 * TC: fits */
    p8t = period8 / TC;
    p8c = period8 - p8t * TC;
    late_bound = mm_get_u32(b + MM_HIST_ARM_LATE);
    early = mm_get_u16(b + MM_HIST_ARM_EARLY);
    shift = b[MM_HIST_ARM_CELL_SHIFT];
    report_ticks = b[MM_HIST_ARM_REPORT_TICKS];
    raw = (uint8_t)(b[MM_HIST_ARM_FLAGS] & MM_HIST_ARM_FLAG_RAW);
    /* events 0 .. 7, one of each id: period < TC, so one carry at most */
    t = mm_get_u32(b + MM_HIST_ARM_TIMECODE);
    c = mm_get_u32(b + MM_HIST_ARM_FIRST);
    for (j = 0; j < 8u; j++) {
        s = &ids[(uint8_t)(b[MM_HIST_ARM_EVENT_ID] + j) & 7u];
        s->k = j;
        s->t = t;
        s->c = c;
        c += period;
        if (c >= TC) {
            c -= TC;
            t++;
        }
    }
    next_report = now_tc + report_ticks;
    armed = 1;
    ended = 0;
    want = WANT_ANSWER;
}

void pf_hist_query(void)
{
    want |= WANT_FULL;
}

uint8_t pf_hist_takes_edges(void)
{
    return (uint8_t)(armed && !raw);
}

uint8_t pf_hist_armed(void)
{
    return armed;
}

static uint8_t periodic_due(uint32_t now_tc)
{
    return (uint8_t)(armed && (int32_t)(now_tc - next_report) >= 0);
}

uint8_t pf_hist_ready(uint32_t now_tc)
{
    return (uint8_t)(rep != REP_NONE || want != 0 || periodic_due(now_tc));
}

static void summary(uint8_t *p, uint8_t zero)
{
    uint8_t i;

    mm_put_u16(p + MM_HIST_SUMMARY_REPORT, reports);
    p[MM_HIST_SUMMARY_FLAGS] = (uint8_t)((armed ? MM_HIST_SUMMARY_FLAG_ARMED : 0) |
                                         (ended ? MM_HIST_SUMMARY_FLAG_FINAL : 0));
    if (zero) {   /* the answer to a HIST_ARM: edges binned before it was sent are not in it */
        for (i = MM_HIST_SUMMARY_OK; i < MM_HIST_SUMMARY_LEN; i++)
            p[i] = 0;
        mm_put_u32(p + MM_HIST_SUMMARY_MIN, 0xFFFFFFFFul);
        return;
    }
    mm_put_u32(p + MM_HIST_SUMMARY_OK, n_ok);
    mm_put_u32(p + MM_HIST_SUMMARY_LATE, n_late);
    mm_put_u32(p + MM_HIST_SUMMARY_EARLY, n_early);
    mm_put_u32(p + MM_HIST_SUMMARY_MISSED, n_missed);
    mm_put_u16(p + MM_HIST_SUMMARY_STRAY, n_stray);
    mm_put_u32(p + MM_HIST_SUMMARY_MIN, lat_min);
    mm_put_u32(p + MM_HIST_SUMMARY_MAX, lat_max);
    mm_put_u32(p + MM_HIST_SUMMARY_WORST, worst);
    mm_put_u32(p + MM_HIST_SUMMARY_SUM_LO, sum_lo);
    mm_put_u16(p + MM_HIST_SUMMARY_SUM_HI, sum_hi);
    p[MM_HIST_SUMMARY_BLOCKS] = rep_blocks;
}

/* Starts the report due, if any: 1 if one was started. */
static uint8_t start_report(uint32_t now_tc, uint32_t ptc, uint32_t pcounts)
{
    uint8_t i;

    if (armed) {
        /* windows closed with no edge: missed now (SPEC.md: "when the next report is made") */
        for (i = 0; i < 8u; i++)
            (void)skip(&ids[i], ptc, pcounts, -(int32_t)early);
        if (left == 0)
            want |= WANT_FINAL;
    }
    if (want & (WANT_FINAL | WANT_END)) {
        armed = 0;                     /* the series ends: no more joining, no periodic report */
        ended = 1;
        want = 0;                      /* (a full report covers a query too) */
        rep = REP_FULL;
    } else if (want & WANT_FULL) {
        want = 0;
        rep = REP_FULL;
    } else if (periodic_due(now_tc)) {
        rep = REP_CHANGED;
    } else {
        return 0;
    }
    if (periodic_due(now_tc)) {
        next_report += report_ticks;
        if (periodic_due(now_tc))      /* fell behind (a long report at a low rate): not in a burst */
            next_report = now_tc + report_ticks;
    }
    reports++;
    rep_block = 0;
    rep_blocks = 0;
    return 1;
}

uint8_t pf_hist_frame(uint8_t *p, uint32_t now_tc, uint32_t ptc, uint32_t pcounts)
{
    const uint8_t *map;
    uint8_t b;
    uint8_t j;
    uint16_t cell;

    if (rep == REP_NONE) {
        if (want & WANT_ANSWER) {
            want &= (uint8_t)~WANT_ANSWER;
            summary(p, 1);
            return MM_T_HIST_SUMMARY;
        }
        if (!start_report(now_tc, ptc, pcounts))
            return 0;
    }
    map = rep == REP_FULL ? used : dirty;
    for (b = rep_block; b < NBLOCK; b++) {
        if (map[b >> 3] == 0) {        /* eight empty blocks at once */
            b |= 7u;
            continue;
        }
        if (map[b >> 3] & (uint8_t)(1u << (b & 7u)))
            break;
    }
    if (b < NBLOCK) {
        dirty[b >> 3] &= (uint8_t)~(1u << (b & 7u));
        rep_block = (uint8_t)(b + 1u);
        rep_blocks++;
        cell = (uint16_t)(b * MM_HIST_BLOCK);
        mm_put_u16(p + MM_HIST_CELLS_REPORT, reports);
        mm_put_u16(p + MM_HIST_CELLS_CELL, cell);
        for (j = 0; j < MM_HIST_BLOCK; j++, cell++)
            mm_put_u32(p + MM_HIST_CELLS_C0 + 4u * j, cell < NCELL ? cells[cell] : 0);
        return MM_T_HIST_CELLS;
    }
    rep = REP_NONE;
    summary(p, 0);
    return MM_T_HIST_SUMMARY;
}

#endif

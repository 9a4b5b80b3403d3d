/*
 * cmocka tests of the C protocol library against the shared vectors (protocol/vectors/NAME.vec) and
 * against an independent reference model (refmodel.c), plus edge cases the vectors do not reach.
 *
 * Usage: mmproto_test [vector-dir]   (else $MM_VECTORS, else the directory compiled in)
 * SPEC.md is read from vector-dir/../SPEC.md, or $MM_SPEC.
 *
 * The same source builds with the default decoder capacity and with a small one
 * (-DMM_DEC_CAPACITY=7, the 8051 profiler's): expectations that depend on the capacity are derived
 * from MM_DEC_MAX_ENCODED, and the stream counters of streams.vec (written for the full capacity)
 * are checked through the reference model, which must itself reproduce the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mmproto.h"
#include "refmodel.h"
#include "vecfile.h"

#ifndef MM_VECTOR_DIR
#define MM_VECTOR_DIR "../vectors"
#endif

static const char *vec_dir = MM_VECTOR_DIR;
static int n_crc, n_cobs, n_msg, n_stream;
static int n_spec_msgs, n_spec_fields, n_spec_errors, n_spec_wire;

/* ---- helpers -------------------------------------------------------------------------------- */

static void hexdump(const char *label, const uint8_t *p, size_t n)
{
    size_t i;
    print_error("  %s (%u):", label, (unsigned)n);
    for (i = 0; i < n; i++)
        print_error(" %02X", p[i]);
    print_error("\n");
}

#define EXPECT(cond, vec, what)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            print_error("vector %s: %s\n", (vec), (what));                                         \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

static void expect_bytes(const char *vec, const char *what, const uint8_t *got, size_t got_n,
                         const uint8_t *want, size_t want_n)
{
    if (got_n != want_n || memcmp(got, want, want_n) != 0) {
        print_error("vector %s: %s differ\n", vec, what);
        hexdump("got ", got, got_n);
        hexdump("want", want, want_n);
        fail();
    }
}

static void open_vectors(struct vec_file *vf, const char *name)
{
    if (vec_open(vf, vec_dir, name) != 0) {
        print_error("cannot open %s/%s\n", vec_dir, name);
        fail();
    }
}

static uint16_t crc_of(const uint8_t *p, size_t n)
{
    uint16_t crc = MM_CRC_INIT;
    size_t i;
    for (i = 0; i < n; i++)
        crc = mm_crc16_update(crc, p[i]);
    return crc;
}

/* Runs the library encoder to completion; returns the number of bytes (never more than cap). */
static size_t encode(uint8_t type, uint8_t seq, const uint8_t *body, uint8_t body_len, uint8_t *out,
                     size_t cap)
{
    struct mm_enc e;
    size_t n = 0;
    int16_t b;
    mm_enc_start(&e, type, seq, body, body_len);
    while ((b = mm_enc_next(&e)) >= 0) {
        assert_true(b <= 0xFF);
        assert_true(n < cap);
        out[n++] = (uint8_t)b;
    }
    assert_int_equal(mm_enc_next(&e), -1); /* stays done */
    return n;
}

/* The same with the bounded-step API (mm_enc_begin, mm_enc_crc_step, mm_enc_step); checks that the
 * CRC takes exactly body_len + 2 steps and that no byte needs more than 254 MM_ENC_AGAIN calls. */
static size_t encode_steps(uint8_t type, uint8_t seq, const uint8_t *body, uint8_t body_len,
                           uint8_t *out, size_t cap)
{
    struct mm_enc e;
    size_t n = 0, steps = 1, again;
    int16_t b;
    mm_enc_begin(&e, type, seq, body, body_len);
    while (mm_enc_crc_step(&e))
        steps++;
    assert_int_equal(steps, (size_t)body_len + 2);
    for (;;) {
        again = 0;
        while ((b = mm_enc_step(&e)) == MM_ENC_AGAIN) {
            again++;
            assert_true(again < 255);
        }
        if (b < 0)
            break;
        assert_true(b <= 0xFF);
        assert_true(n < cap);
        out[n++] = (uint8_t)b;
    }
    assert_int_equal(b, -1);
    assert_int_equal(mm_enc_step(&e), -1); /* stays done */
    return n;
}

/* ---- message and field tables (SPEC.md section 5) ------------------------------------------- */

struct msg_def {
    const char *name;
    uint8_t type;
    uint8_t len;
    int seen;      /* in messages.vec */
    int spec_seen; /* in SPEC.md: [0] heading, [1] wire table */
    int spec_wire;
};

#define M(msg) { #msg, MM_T_##msg, MM_##msg##_LEN, 0, 0, 0 }
static struct msg_def msgs[] = {
    M(HELLO), M(QUERY), M(ERROR), M(COUNTERS), M(TIMECODE), M(RESULT), M(FIRE),
    M(SCHEDULE), M(ACK), M(MODE), M(STATUS), M(LOCAL_EVENT), M(FIRED), M(CANCEL), M(CANCELLED), M(NOP), M(BAUD),
    M(PERIODIC), M(HIST_ARM), M(HIST_SUMMARY), M(HIST_CELLS),
};
#define N_MSGS (sizeof msgs / sizeof msgs[0])

struct field_def {
    const char *msg;
    const char *name;
    unsigned offset;
    unsigned width;
    int seen;      /* in messages.vec */
    int spec_seen; /* in SPEC.md */
};

#define F(msg, FIELD, field, width) { #msg, #field, MM_##msg##_##FIELD, width, 0, 0 }
static struct field_def fields[] = {
    F(HELLO, PROTO_VERSION, proto_version, 1), F(HELLO, NODE_KIND, node_kind, 1),
    F(HELLO, FW_VERSION, fw_version, 2), F(HELLO, CPU_HZ, cpu_hz, 4),
    F(HELLO, TIMER_HZ, timer_hz, 4), F(HELLO, TICK_COUNTS, tick_counts, 4),
    F(HELLO, BAUD, baud, 4), F(HELLO, FLAGS, flags, 1), F(HELLO, RESET_CAUSE, reset_cause, 1),
    F(QUERY, WHAT, what, 1),
    F(ERROR, CODE, code, 1), F(ERROR, REF_TYPE, ref_type, 1), F(ERROR, REF_TAG, ref_tag, 2),
    F(ERROR, TIMECODE, timecode, 4),
    F(COUNTERS, RX_OK, rx_ok, 2), F(COUNTERS, RX_BAD_CRC, rx_bad_crc, 2),
    F(COUNTERS, RX_BAD_COBS, rx_bad_cobs, 2), F(COUNTERS, RX_TOO_LONG, rx_too_long, 2),
    F(COUNTERS, RX_TOO_SHORT, rx_too_short, 2), F(COUNTERS, RX_BAD_MESSAGE, rx_bad_message, 2),
    F(COUNTERS, TX_DROPPED, tx_dropped, 2), F(COUNTERS, NODE_A, node_a, 2),
    F(COUNTERS, NODE_B, node_b, 2), F(COUNTERS, NODE_C, node_c, 2), F(COUNTERS, NODE_D, node_d, 2),
    F(COUNTERS, RX_RING_OVERFLOW, rx_ring_overflow, 2), F(COUNTERS, RX_HW_OVERRUN, rx_hw_overrun, 2),
    F(TIMECODE, TIMECODE, timecode, 4),
    F(RESULT, EVENT_ID, event_id, 1), F(RESULT, FLAGS, flags, 1), F(RESULT, TAG, tag, 2),
    F(RESULT, TIMECODE, timecode, 4), F(RESULT, COUNTS, counts, 4),
    F(FIRE, EVENT_ID, event_id, 1), F(FIRE, TAG, tag, 2),
    F(SCHEDULE, TAG, tag, 2), F(SCHEDULE, EVENT_ID, event_id, 1), F(SCHEDULE, TIMECODE, timecode, 4),
    F(ACK, TAG, tag, 2), F(ACK, EVENT_ID, event_id, 1), F(ACK, TIMECODE, timecode, 4),
    F(ACK, PHASE, phase, 2), F(ACK, PENDING, pending, 1),
    F(MODE, MODE, mode, 1), F(MODE, DISPATCH, dispatch, 1), F(MODE, DISTANCE, distance, 1),
    F(MODE, PERIOD, period, 2), F(MODE, RANDOM_IDS, random_ids, 1),
    F(MODE, CPU_LOAD, cpu_load, 1), F(MODE, PERIODIC_PERIOD_US, periodic_period_us, 2),
    F(MODE, PERIODIC_EXEC_US, periodic_exec_us, 2),
    F(STATUS, MODE, mode, 1), F(STATUS, DISPATCH, dispatch, 1), F(STATUS, TIMECODE, timecode, 4),
    F(STATUS, PENDING, pending, 1), F(STATUS, CAPACITY, capacity, 1), F(STATUS, FIRED, fired, 4),
    F(STATUS, STACK_TIMECODE, stack_timecode, 2), F(STATUS, STACK_SERIAL, stack_serial, 2),
    F(STATUS, STACK_STATUS, stack_status, 2),
    F(STATUS, CPU_LOAD, cpu_load, 1), F(STATUS, PERIODIC_PERIOD_US, periodic_period_us, 2),
    F(STATUS, PERIODIC_EXEC_US, periodic_exec_us, 2), F(STATUS, CPU_LOOPS, cpu_loops, 4),
    F(STATUS, PERIODIC_RUNS, periodic_runs, 4), F(STATUS, PERIODIC_OVERRUNS, periodic_overruns, 2),
    F(LOCAL_EVENT, TAG, tag, 2), F(LOCAL_EVENT, EVENT_ID, event_id, 1),
    F(LOCAL_EVENT, TIMECODE, timecode, 4),
    F(FIRED, TAG, tag, 2), F(FIRED, EVENT_ID, event_id, 1), F(FIRED, TIMECODE, timecode, 4),
    F(CANCEL, TAG, tag, 2), F(CANCEL, FLAGS, flags, 1),
    F(CANCELLED, TAG, tag, 2), F(CANCELLED, REMOVED, removed, 1), F(CANCELLED, PENDING, pending, 1), F(NOP, FILL, fill, 1),
    F(BAUD, HUNDREDS, baud_hundreds, 2),
    F(PERIODIC, TAG, tag, 2), F(PERIODIC, EVENT_ID, event_id, 1), F(PERIODIC, TIMECODE, timecode, 4),
    F(PERIODIC, FIRST, first, 4), F(PERIODIC, PERIOD, period, 4), F(PERIODIC, TICK_COUNTS, tick_counts, 4),
    F(PERIODIC, COUNT, count, 2), F(PERIODIC, FLAGS, flags, 1),
    F(HIST_ARM, TIMECODE, timecode, 4), F(HIST_ARM, FIRST, first, 4), F(HIST_ARM, PERIOD, period, 4),
    F(HIST_ARM, COUNT, count, 4), F(HIST_ARM, LATE, late, 4), F(HIST_ARM, EARLY, early, 2),
    F(HIST_ARM, EVENT_ID, event_id, 1), F(HIST_ARM, CELL_SHIFT, cell_shift, 1),
    F(HIST_ARM, REPORT_TICKS, report_ticks, 1), F(HIST_ARM, FLAGS, flags, 1),
    F(HIST_SUMMARY, REPORT, report, 2), F(HIST_SUMMARY, FLAGS, flags, 1), F(HIST_SUMMARY, OK, ok, 4),
    F(HIST_SUMMARY, LATE, late, 4), F(HIST_SUMMARY, EARLY, early, 4), F(HIST_SUMMARY, MISSED, missed, 4),
    F(HIST_SUMMARY, STRAY, stray, 2), F(HIST_SUMMARY, MIN, min, 4), F(HIST_SUMMARY, MAX, max, 4),
    F(HIST_SUMMARY, WORST, worst, 4), F(HIST_SUMMARY, SUM_LO, sum_lo, 4), F(HIST_SUMMARY, SUM_HI, sum_hi, 2),
    F(HIST_SUMMARY, BLOCKS, blocks, 1),
    F(HIST_CELLS, REPORT, report, 2), F(HIST_CELLS, CELL, cell, 2), F(HIST_CELLS, C0, c0, 4),
    F(HIST_CELLS, C1, c1, 4), F(HIST_CELLS, C2, c2, 4), F(HIST_CELLS, C3, c3, 4), F(HIST_CELLS, C4, c4, 4),
    F(HIST_CELLS, C5, c5, 4), F(HIST_CELLS, C6, c6, 4), F(HIST_CELLS, C7, c7, 4),
};
#define N_FIELDS (sizeof fields / sizeof fields[0])

static struct msg_def *find_msg(const char *name)
{
    size_t i;
    for (i = 0; i < N_MSGS; i++)
        if (strcmp(msgs[i].name, name) == 0)
            return &msgs[i];
    return NULL;
}

static struct field_def *find_field(const char *msg, const char *name)
{
    size_t i;
    for (i = 0; i < N_FIELDS; i++)
        if (strcmp(fields[i].msg, msg) == 0 && strcmp(fields[i].name, name) == 0)
            return &fields[i];
    return NULL;
}

/* ---- crc.vec -------------------------------------------------------------------------------- */

static void test_crc_vectors(void **state)
{
    static const uint8_t check[] = "123456789";
    struct vec_file vf;
    struct vec_record r;
    unsigned b;
    (void)state;

    /* The catalogue check value, independently of the file. */
    assert_int_equal(crc_of(check, 9), 0x29B1);
    assert_int_equal(MM_CRC_CHECK, 0x29B1);
    /* The single-argument form the encoder and decoder use is the same step. */
    for (b = 0; b < 256; b++) {
        assert_int_equal(mm_crc16_update(0xFFFF, (uint8_t)b), mm_crc16_shift8((uint16_t)(0xFFFF ^ (b << 8))));
        assert_int_equal(mm_crc16_update(0x1D0F, (uint8_t)b), mm_crc16_shift8((uint16_t)(0x1D0F ^ (b << 8))));
    }

    open_vectors(&vf, "crc.vec");
    while (vec_next(&vf, &r)) {
        uint8_t data[1024];
        size_t n = 0;
        const char *d = vec_get(&r, "data"), *c = vec_get(&r, "crc");
        EXPECT(strcmp(r.kind, "crc") == 0 && d && c, r.name, "malformed crc record");
        vec_hex(d, data, sizeof data, &n);
        EXPECT(crc_of(data, n) == vec_crc(c), r.name, "mm_crc16_update disagrees");
        EXPECT(ref_crc16(data, n) == vec_crc(c), r.name, "reference crc disagrees");
        if (strcmp(r.name, "catalogue_check_123456789") == 0)
            EXPECT(vec_crc(c) == 0x29B1, r.name, "file lost the catalogue value");
        n_crc++;
        vec_record_free(&r);
    }
    vec_close(&vf);
    assert_true(n_crc > 0);
}

/* ---- cobs.vec ------------------------------------------------------------------------------- */

static void test_cobs_vectors(void **state)
{
    struct vec_file vf;
    struct vec_record r;
    (void)state;

    open_vectors(&vf, "cobs.vec");
    while (vec_next(&vf, &r)) {
        uint8_t data[1024], enc[1024], tmp[1024];
        size_t dn = 0, en = 0, i;
        const char *d = vec_get(&r, "data"), *e = vec_get(&r, "encoded");
        struct mm_dec dec;
        uint8_t res = MM_DEC_BUSY;

        EXPECT(strcmp(r.kind, "cobs") == 0 && d && e, r.name, "malformed cobs record");
        vec_hex(d, data, sizeof data, &dn);
        vec_hex(e, enc, sizeof enc, &en);
        /* The reference codec must agree with the published examples. */
        EXPECT(ref_cobs_encode(data, dn, tmp) == en && memcmp(tmp, enc, en) == 0, r.name,
               "reference encoder");
        EXPECT(ref_cobs_decode(enc, en, tmp) == (long)dn && memcmp(tmp, data, dn) == 0, r.name,
               "reference decoder");

        mm_dec_init(&dec);
        for (i = 0; i < en; i++)
            EXPECT(mm_cobs_push(&dec, enc[i]) == MM_DEC_BUSY, r.name, "result before the delimiter");
        res = mm_cobs_push(&dec, 0);
        if (en > MM_DEC_MAX_ENCODED) {
            EXPECT(res == MM_DEC_TOO_LONG, r.name, "longer than the decoder's limit: want too_long");
        } else {
            EXPECT(res == MM_DEC_FRAME, r.name, "want a frame");
            expect_bytes(r.name, "decoded bytes", dec.buf, mm_dec_payload_len(&dec), data, dn);
        }
        EXPECT(mm_dec_at_frame_start(&dec), r.name, "not at a frame start after the delimiter");
        n_cobs++;
        vec_record_free(&r);
    }
    vec_close(&vf);
    assert_true(n_cobs > 0);
}

/* ---- messages.vec --------------------------------------------------------------------------- */

static void test_message_vectors(void **state)
{
    struct vec_file vf;
    struct vec_record r;
    size_t i;
    (void)state;

    for (i = 0; i < N_MSGS; i++)
        msgs[i].seen = 0;
    for (i = 0; i < N_FIELDS; i++)
        fields[i].seen = 0;

    open_vectors(&vf, "messages.vec");
    while (vec_next(&vf, &r)) {
        uint8_t payload[256], wire[256], out[256], body[256];
        size_t pn = 0, wn = 0, on, body_len;
        const char *t = vec_get(&r, "type"), *s = vec_get(&r, "seq"), *p = vec_get(&r, "payload");
        const char *c = vec_get(&r, "crc"), *w = vec_get(&r, "wire");
        char tname[64];
        unsigned tcode;
        struct msg_def *md;
        struct mm_dec dec;
        unsigned offset = 0, nfields = 0;
        int li;
        uint8_t res = MM_DEC_BUSY;

        EXPECT(strcmp(r.kind, "message") == 0 && t && s && p && c && w, r.name, "malformed message");
        EXPECT(sscanf(t, "0x%x %63s", &tcode, tname) == 2, r.name, "malformed type line");
        vec_hex(p, payload, sizeof payload, &pn);
        vec_hex(w, wire, sizeof wire, &wn);
        EXPECT(pn >= MM_HDR_LEN, r.name, "payload without header");
        body_len = pn - MM_HDR_LEN;

        md = find_msg(tname);
        EXPECT(md != NULL, r.name, "message name not in the C table");
        md->seen++;
        EXPECT(md->type == tcode && payload[MM_HDR_TYPE] == tcode, r.name, "type code");
        EXPECT((unsigned)payload[MM_HDR_SEQ] == (unsigned)strtoul(s, NULL, 10), r.name, "seq");
        EXPECT(md->len == body_len, r.name, "body length differs from MM_<MSG>_LEN");
        EXPECT(mm_msg_body_len(md->type) == md->len, r.name, "mm_msg_body_len");
        EXPECT(crc_of(payload, pn) == vec_crc(c), r.name, "crc line");
        EXPECT(wn == MM_WIRE_LEN(body_len), r.name, "wire length is not body + 6");

        /* (a) the streaming encoder produces exactly the wire bytes */
        on = encode(payload[0], payload[1], payload + MM_HDR_LEN, (uint8_t)body_len, out, sizeof out);
        expect_bytes(r.name, "encoded wire", out, on, wire, wn);

        /* (b) the decoder gives back exactly the payload */
        mm_dec_init(&dec);
        for (i = 0; i + 1 < wn; i++)
            EXPECT(mm_dec_push(&dec, wire[i]) == MM_DEC_BUSY, r.name, "result before the delimiter");
        res = mm_dec_push(&dec, wire[wn - 1]);
        if (wn - 1 > MM_DEC_MAX_ENCODED) {
            EXPECT(res == MM_DEC_TOO_LONG, r.name, "frame above the decoder's limit: want too_long");
        } else {
            EXPECT(res == MM_DEC_FRAME, r.name, "want MM_DEC_FRAME");
            expect_bytes(r.name, "decoded payload", dec.buf, mm_dec_payload_len(&dec), payload, pn);
            EXPECT(mm_msg_check(dec.buf, mm_dec_payload_len(&dec)) == MM_MSG_OK, r.name, "mm_msg_check");
        }
        EXPECT(mm_msg_check(payload, (uint8_t)pn) == MM_MSG_OK, r.name, "mm_msg_check on the payload");

        /* (c) field layout, (d) writing the fields reproduces the body */
        memset(body, 0, sizeof body);
        for (li = 0; li < r.nlines; li++) {
            char fname[64], kind[8];
            unsigned long value;
            struct field_def *fd;
            unsigned width;

            if (strcmp(r.lines[li].key, "field") != 0)
                continue;
            EXPECT(sscanf(r.lines[li].rest, "%63s %7s %lu", fname, kind, &value) == 3, r.name,
                   "malformed field line");
            fd = find_field(md->name, fname);
            if (!fd) {
                print_error("vector %s: field %s.%s has no offset macro in the C table\n", r.name,
                            md->name, fname);
                fail();
            }
            width = strcmp(kind, "u8") == 0 ? 1 : strcmp(kind, "u16") == 0 ? 2 : strcmp(kind, "u32") == 0 ? 4 : 0;
            if (width != fd->width || fd->offset != offset) {
                print_error("vector %s: field %s.%s: C says offset %u width %u, vector says offset %u %s\n",
                            r.name, md->name, fname, fd->offset, fd->width, offset, kind);
                fail();
            }
            fd->seen++;
            EXPECT(fd->offset + width <= body_len, r.name, "field beyond the body");
            switch (width) {
            case 1:
                EXPECT(payload[MM_HDR_LEN + fd->offset] == value, r.name, fname);
                body[fd->offset] = (uint8_t)value;
                break;
            case 2:
                EXPECT(mm_get_u16(payload + MM_HDR_LEN + fd->offset) == value, r.name, fname);
                mm_put_u16(body + fd->offset, (uint16_t)value);
                break;
            default:
                EXPECT(mm_get_u32(payload + MM_HDR_LEN + fd->offset) == value, r.name, fname);
                mm_put_u32(body + fd->offset, (uint32_t)value);
                break;
            }
            offset += width;
            nfields++;
        }
        EXPECT(offset == md->len, r.name, "field widths do not add up to MM_<MSG>_LEN");
        {
            unsigned in_table = 0;
            for (i = 0; i < N_FIELDS; i++)
                in_table += strcmp(fields[i].msg, md->name) == 0;
            EXPECT(in_table == nfields, r.name, "the C table has fields the vector does not list");
        }
        expect_bytes(r.name, "body written with mm_put_*", body, body_len, payload + MM_HDR_LEN, body_len);

        n_msg++;
        vec_record_free(&r);
    }
    vec_close(&vf);
    assert_true(n_msg > 0);

    for (i = 0; i < N_MSGS; i++)
        if (!msgs[i].seen) {
            print_error("message %s has no vector\n", msgs[i].name);
            fail();
        }
    for (i = 0; i < N_FIELDS; i++)
        if (!fields[i].seen) {
            print_error("field %s.%s never appears in messages.vec\n", fields[i].msg, fields[i].name);
            fail();
        }
}

/* ---- SPEC.md tables ------------------------------------------------------------------------ */

struct err_def {
    const char *name;
    unsigned code;
    int seen;
};

#define E(name) { #name, MM_ERR_##name, 0 }
static struct err_def errs[] = {
    E(DUPLICATE), E(LIST_FULL), E(PAST_DUE), E(BAD_MODE), E(UNKNOWN_TYPE), E(BAD_LENGTH),
    E(BAD_VALUE), E(OVERFLOW), E(HORIZON),
};
#define N_ERRS (sizeof errs / sizeof errs[0])

/* Splits a markdown table row "| a | b | c |" into trimmed cells; returns their number. */
static int table_cells(char *line, char **cells, int max)
{
    int n = 0;
    char *p = line, *end;
    if (*p != '|')
        return 0;
    p++;
    while (n < max && (end = strchr(p, '|')) != NULL) {
        char *a = p, *b = end;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        *b = '\0';
        cells[n++] = a;
        p = end + 1;
    }
    return n;
}

static int is_decimal(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* SPEC.md is the contract: its message tables (section 5), error codes and wire table (section 8)
 * must agree with the header's macros. */
static void test_spec_tables(void **state)
{
    char path[1100], line[1024];
    const char *env = getenv("MM_SPEC");
    FILE *f;
    int section = 0;
    struct msg_def *cur = NULL;
    size_t i;
    (void)state;

    if (env)
        snprintf(path, sizeof path, "%s", env);
    else
        snprintf(path, sizeof path, "%s/../SPEC.md", vec_dir);
    f = fopen(path, "r");
    if (!f) {
        print_error("cannot open %s (set MM_SPEC)\n", path);
        fail();
    }
    for (i = 0; i < N_MSGS; i++)
        msgs[i].spec_seen = msgs[i].spec_wire = 0;
    for (i = 0; i < N_FIELDS; i++)
        fields[i].spec_seen = 0;

    while (fgets(line, sizeof line, f)) {
        char *cells[8];
        int nc;
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "## ", 3) == 0) {
            section = atoi(line + 3);
            cur = NULL;
            continue;
        }
        if (section == 5 && strncmp(line, "### 0x", 6) == 0) {
            unsigned code;
            char name[64];
            if (sscanf(line + 4, "0x%x %63s", &code, name) != 2)
                fail_msg("SPEC.md: bad heading '%s'", line);
            cur = find_msg(name);
            if (!cur || cur->type != code)
                fail_msg("SPEC.md: '%s' has no matching MM_T_ macro", line);
            cur->spec_seen++;
            n_spec_msgs++;
            continue;
        }
        nc = table_cells(line, cells, 8);
        if (section == 5 && cur && nc >= 3 && is_decimal(cells[0])) {
            unsigned width = strcmp(cells[2], "u8") == 0 ? 1 : strcmp(cells[2], "u16") == 0 ? 2
                           : strcmp(cells[2], "u32") == 0 ? 4 : 0;
            if (width) {
                struct field_def *fd = find_field(cur->name, cells[1]);
                if (!fd || fd->offset != (unsigned)atoi(cells[0]) || fd->width != width)
                    fail_msg("SPEC.md: %s.%s at offset %s (%s) disagrees with the header", cur->name,
                             cells[1], cells[0], cells[2]);
                fd->spec_seen++;
                n_spec_fields++;
            } else if (strcmp(cur->name, "ERROR") == 0) {
                for (i = 0; i < N_ERRS; i++)
                    if (strcmp(errs[i].name, cells[1]) == 0)
                        break;
                if (i == N_ERRS || errs[i].code != (unsigned)atoi(cells[0]))
                    fail_msg("SPEC.md: error code %s %s disagrees with the header", cells[0], cells[1]);
                errs[i].seen++;
                n_spec_errors++;
            }
        } else if (section == 8 && nc >= 4 && strncmp(cells[1], "0x", 2) == 0) {
            struct msg_def *md = find_msg(cells[0]);
            if (!md || md->type != strtoul(cells[1], NULL, 16) || md->len != (unsigned)atoi(cells[2]) ||
                MM_WIRE_LEN(md->len) != atoi(cells[3]))
                fail_msg("SPEC.md wire table: row %s disagrees with the header", cells[0]);
            md->spec_wire++;
            n_spec_wire++;
        }
    }
    fclose(f);

    for (i = 0; i < N_MSGS; i++)
        if (msgs[i].spec_seen != 1 || msgs[i].spec_wire != 1)
            fail_msg("SPEC.md: message %s not found once in section 5 and once in section 8", msgs[i].name);
    for (i = 0; i < N_FIELDS; i++)
        if (fields[i].spec_seen != 1)
            fail_msg("SPEC.md: field %s.%s not found once in section 5", fields[i].msg, fields[i].name);
    for (i = 0; i < N_ERRS; i++)
        if (errs[i].seen != 1)
            fail_msg("SPEC.md: error code %s not found once", errs[i].name);
}

/* ---- streams.vec ---------------------------------------------------------------------------- */

#define N_COUNTERS 9
static const char *const counter_names[N_COUNTERS] = {
    "frames_ok", "bad_crc", "bad_cobs", "too_long", "too_short",
    "unknown_type", "bad_length", "seq_lost", "bytes_dropped",
};
enum { C_OK, C_BAD_CRC, C_BAD_COBS, C_TOO_LONG, C_TOO_SHORT, C_UNKNOWN, C_BAD_LENGTH, C_SEQ_LOST, C_DROPPED };

#define MAX_FRAMES 512
struct stream_result {
    unsigned long counters[N_COUNTERS];
    size_t nframes;
    uint8_t frames[MAX_FRAMES][MM_MAX_PAYLOAD];
    uint8_t frame_len[MAX_FRAMES];
};

/* What a node does with each delivered frame: message checks, then sequence tracking (section 4). */
struct seq_state {
    int have_last;
    uint8_t last;
};

static void accept_payload(struct stream_result *res, struct seq_state *sq, const uint8_t *p, uint8_t len,
                           unsigned long since)
{
    uint8_t m = mm_msg_check(p, len);
    if (m != MM_MSG_OK) {
        res->counters[m == MM_MSG_UNKNOWN_TYPE ? C_UNKNOWN : C_BAD_LENGTH]++;
        res->counters[C_DROPPED] += since;
        return;
    }
    if (sq->have_last && p[MM_HDR_TYPE] != MM_T_HELLO)
        res->counters[C_SEQ_LOST] += mm_seq_gap(sq->last, p[MM_HDR_SEQ]);
    sq->have_last = 1;
    sq->last = p[MM_HDR_SEQ];
    res->counters[C_OK]++;
    assert_true(res->nframes < MAX_FRAMES);
    memcpy(res->frames[res->nframes], p, len);
    res->frame_len[res->nframes++] = len;
}

/* The library decoder, fed byte by byte; `since` counts the encoded bytes of the current frame. */
static void run_library(const uint8_t *in, size_t n, struct stream_result *res)
{
    struct mm_dec dec;
    struct seq_state sq = { 0, 0 };
    unsigned long since = 0;
    size_t i;

    memset(res, 0, sizeof *res);
    mm_dec_init(&dec);
    for (i = 0; i < n; i++) {
        uint8_t r;
        assert_int_equal(mm_dec_at_frame_start(&dec), since == 0);
        r = mm_dec_push(&dec, in[i]);
        if (in[i] != 0) {
            assert_int_equal(r, MM_DEC_BUSY); /* nothing completes without a delimiter */
            since++;
            continue;
        }
        if (since == 0)
            assert_int_equal(r, MM_DEC_BUSY); /* empty frame: counted nowhere */
        switch (r) {
        case MM_DEC_BUSY:
            break;
        case MM_DEC_FRAME:
            assert_true(mm_dec_payload_len(&dec) >= MM_HDR_LEN);
            assert_true(mm_dec_payload_len(&dec) <= MM_DEC_CAPACITY - MM_CRC_LEN);
            accept_payload(res, &sq, dec.buf, mm_dec_payload_len(&dec), since);
            break;
        case MM_DEC_TOO_LONG: res->counters[C_TOO_LONG]++; res->counters[C_DROPPED] += since; break;
        case MM_DEC_BAD_COBS: res->counters[C_BAD_COBS]++; res->counters[C_DROPPED] += since; break;
        case MM_DEC_TOO_SHORT: res->counters[C_TOO_SHORT]++; res->counters[C_DROPPED] += since; break;
        case MM_DEC_BAD_CRC: res->counters[C_BAD_CRC]++; res->counters[C_DROPPED] += since; break;
        default: fail_msg("unexpected decoder result %u", r);
        }
        assert_true(mm_dec_at_frame_start(&dec));
        since = 0;
    }
}

/* The reference model over the same bytes, with a given limit on the encoded length. */
static void run_reference(const uint8_t *in, size_t n, size_t max_encoded, struct stream_result *res)
{
    struct seq_state sq = { 0, 0 };
    size_t start = 0, i;

    memset(res, 0, sizeof *res);
    for (i = 0; i < n; i++) {
        uint8_t out[8192];
        size_t len = 0, en = i - start;
        if (in[i] != 0)
            continue;
        if (en > 0) {
            switch (ref_classify(in + start, en, max_encoded, out, &len)) {
            case REF_OK: accept_payload(res, &sq, out, (uint8_t)len, en); break;
            case REF_TOO_LONG: res->counters[C_TOO_LONG]++; res->counters[C_DROPPED] += en; break;
            case REF_BAD_COBS: res->counters[C_BAD_COBS]++; res->counters[C_DROPPED] += en; break;
            case REF_TOO_SHORT: res->counters[C_TOO_SHORT]++; res->counters[C_DROPPED] += en; break;
            case REF_BAD_CRC: res->counters[C_BAD_CRC]++; res->counters[C_DROPPED] += en; break;
            }
        }
        start = i + 1;
    }
}

static void compare_results(const char *vec, const char *what, const struct stream_result *got,
                            const struct stream_result *want)
{
    size_t i;
    for (i = 0; i < N_COUNTERS; i++)
        if (got->counters[i] != want->counters[i]) {
            print_error("vector %s: %s: counter %s is %lu, want %lu\n", vec, what, counter_names[i],
                        got->counters[i], want->counters[i]);
            fail();
        }
    if (got->nframes != want->nframes) {
        print_error("vector %s: %s: %u frames, want %u\n", vec, what, (unsigned)got->nframes,
                    (unsigned)want->nframes);
        fail();
    }
    for (i = 0; i < got->nframes; i++)
        expect_bytes(vec, what, got->frames[i], got->frame_len[i], want->frames[i], want->frame_len[i]);
}

static struct stream_result want_file, got_lib, got_ref;

static void test_stream_vectors(void **state)
{
    struct vec_file vf;
    struct vec_record r;
    static uint8_t input[65536];
    (void)state;

    open_vectors(&vf, "streams.vec");
    while (vec_next(&vf, &r)) {
        size_t n = 0;
        int li, seen[N_COUNTERS] = { 0 };
        size_t k;

        EXPECT(strcmp(r.kind, "stream") == 0, r.name, "malformed stream record");
        memset(&want_file, 0, sizeof want_file);
        for (li = 0; li < r.nlines; li++) {
            const char *key = r.lines[li].key;
            if (strcmp(key, "input") == 0) {
                vec_hex(r.lines[li].rest, input, sizeof input, &n);
            } else if (strcmp(key, "frame") == 0) {
                size_t fl = 0;
                EXPECT(want_file.nframes < MAX_FRAMES, r.name, "too many frames");
                vec_hex(r.lines[li].rest, want_file.frames[want_file.nframes], MM_MAX_PAYLOAD, &fl);
                want_file.frame_len[want_file.nframes++] = (uint8_t)fl;
            } else if (strcmp(key, "counters") == 0) {
                char tmp[1024], *tok;
                EXPECT(strlen(r.lines[li].rest) < sizeof tmp, r.name, "counters line too long");
                strcpy(tmp, r.lines[li].rest);
                for (tok = strtok(tmp, " "); tok; tok = strtok(NULL, " ")) {
                    char *eq = strchr(tok, '=');
                    EXPECT(eq != NULL, r.name, "malformed counter");
                    *eq = '\0';
                    for (k = 0; k < N_COUNTERS; k++)
                        if (strcmp(tok, counter_names[k]) == 0)
                            break;
                    EXPECT(k < N_COUNTERS, r.name, "unknown counter name");
                    want_file.counters[k] = strtoul(eq + 1, NULL, 10);
                    seen[k] = 1;
                }
            } else {
                EXPECT(0, r.name, "unknown line in stream record");
            }
        }
        for (k = 0; k < N_COUNTERS; k++)
            EXPECT(seen[k], r.name, "a counter is missing from the file");

        /* The reference model reproduces the file at the spec's limit... */
        run_reference(input, n, MM_MAX_ENCODED, &got_ref);
        compare_results(r.name, "reference model vs file", &got_ref, &want_file);
        /* ...and the library matches it at the library's own limit (the file itself when the
         * decoder has the full capacity). */
        run_library(input, n, &got_lib);
        if (MM_DEC_MAX_ENCODED == MM_MAX_ENCODED) {
            compare_results(r.name, "library vs file", &got_lib, &want_file);
        } else {
            run_reference(input, n, MM_DEC_MAX_ENCODED, &got_ref);
            compare_results(r.name, "library vs reference at the small capacity", &got_lib, &got_ref);
        }
        n_stream++;
        vec_record_free(&r);
    }
    vec_close(&vf);
    assert_true(n_stream > 0);
}

/* ---- direct tests of the edges -------------------------------------------------------------- */

static uint8_t push_all(struct mm_dec *d, const uint8_t *p, size_t n)
{
    uint8_t r = MM_DEC_BUSY;
    size_t i;
    for (i = 0; i < n; i++)
        r = mm_dec_push(d, p[i]);
    return r;
}

/* A valid FIRE frame (the largest the 8051 profiler's decoder takes), to show that a decoder
 * recovered. */
static size_t good_frame(uint8_t *wire)
{
    static const uint8_t body[MM_FIRE_LEN] = { 5, 0x34, 0x12 };
    return encode(MM_T_FIRE, 9, body, MM_FIRE_LEN, wire, 64);
}

static void expect_recovers(struct mm_dec *d)
{
    uint8_t wire[64];
    size_t n = good_frame(wire);
    assert_true(mm_dec_at_frame_start(d));
    if (n - 1 <= MM_DEC_MAX_ENCODED) {
        assert_int_equal(push_all(d, wire, n), MM_DEC_FRAME);
        assert_int_equal(mm_dec_payload_len(d), MM_HDR_LEN + MM_FIRE_LEN);
        assert_int_equal(d->buf[0], MM_T_FIRE);
        assert_int_equal(mm_get_u16(d->buf + MM_HDR_LEN + MM_FIRE_TAG), 0x1234);
    } else {
        assert_int_equal(push_all(d, wire, n), MM_DEC_TOO_LONG);
    }
}

static void test_dec_too_long(void **state)
{
    struct mm_dec d;
    uint8_t snapshot[MM_DEC_CAPACITY];
    size_t i;
    (void)state;

    mm_dec_init(&d);
    /* Exactly the limit is not too long: a COBS block of MM_DEC_CAPACITY data bytes. */
    assert_int_equal(mm_cobs_push(&d, MM_DEC_CAPACITY + 1), MM_DEC_BUSY);
    for (i = 0; i < MM_DEC_CAPACITY; i++)
        assert_int_equal(mm_cobs_push(&d, (uint8_t)(i + 1)), MM_DEC_BUSY);
    assert_int_equal(mm_cobs_push(&d, 0), MM_DEC_FRAME);
    assert_int_equal(mm_dec_payload_len(&d), MM_DEC_CAPACITY);

    /* One byte more is: after it, buf is never written again until the delimiter. */
    mm_dec_init(&d);
    for (i = 0; i < MM_DEC_MAX_ENCODED; i++) {
        assert_int_equal(mm_dec_push(&d, 0x55), MM_DEC_BUSY);
        assert_false(mm_dec_at_frame_start(&d));
    }
    memcpy(snapshot, d.buf, sizeof snapshot);
    for (i = 0; i < 1000; i++) {
        assert_int_equal(mm_dec_push(&d, (uint8_t)(1 + i % 255)), MM_DEC_BUSY);
        assert_false(mm_dec_at_frame_start(&d));
    }
    assert_memory_equal(snapshot, d.buf, sizeof snapshot);
    assert_int_equal(mm_dec_push(&d, 0), MM_DEC_TOO_LONG);
    expect_recovers(&d);

    /* A 0xFF block never completes within the limit: too_long, not a 254-byte frame. */
    mm_dec_init(&d);
    assert_int_equal(mm_dec_push(&d, 0xFF), MM_DEC_BUSY);
    for (i = 0; i < 254; i++)
        assert_int_equal(mm_dec_push(&d, (uint8_t)(i + 1)), MM_DEC_BUSY);
    assert_int_equal(mm_dec_push(&d, 0), MM_DEC_TOO_LONG);
    expect_recovers(&d);
}

static void test_dec_bad_cobs_and_short(void **state)
{
    static const uint8_t ff_short[] = { 0xFF, 0x01, 0x02, 0x00 };
    static const uint8_t ff_last[] = { 0x02, 0x11, 0xFF, 0x00 };
    static const uint8_t one_block[] = { 0x01, 0x00 };
    static const uint8_t zeros[] = { 0x01, 0x01, 0x01, 0x00 };
    static const uint8_t zeros4[] = { 0x01, 0x01, 0x01, 0x01, 0x01, 0x00 };
    struct mm_dec d;
    (void)state;

    mm_dec_init(&d);
    assert_int_equal(push_all(&d, ff_short, sizeof ff_short), MM_DEC_BAD_COBS);
    expect_recovers(&d);
    assert_int_equal(push_all(&d, ff_last, sizeof ff_last), MM_DEC_BAD_COBS);
    expect_recovers(&d);
    assert_int_equal(push_all(&d, one_block, sizeof one_block), MM_DEC_TOO_SHORT);
    assert_int_equal(push_all(&d, zeros, sizeof zeros), MM_DEC_TOO_SHORT);
    /* Four zeros decoded: long enough, but the CRC of two zeros is 0x1D0F, not 0x0000. */
    assert_int_equal(push_all(&d, zeros4, sizeof zeros4), MM_DEC_BAD_CRC);
    expect_recovers(&d);

    /* The COBS layer alone keeps zero-only data. */
    mm_dec_init(&d);
    assert_int_equal(mm_cobs_push(&d, 0x01), MM_DEC_BUSY);
    assert_int_equal(mm_cobs_push(&d, 0x01), MM_DEC_BUSY);
    assert_int_equal(mm_cobs_push(&d, 0x00), MM_DEC_FRAME);
    assert_int_equal(mm_dec_payload_len(&d), 1);
    assert_int_equal(d.buf[0], 0);
}

static void test_dec_frame_start(void **state)
{
    uint8_t wire[64];
    size_t n = good_frame(wire), i;
    struct mm_dec d;
    (void)state;

    mm_dec_init(&d);
    assert_true(mm_dec_at_frame_start(&d));
    /* Flush bytes (empty frames) complete nothing and keep the decoder at a frame start. */
    assert_int_equal(mm_dec_push(&d, 0), MM_DEC_BUSY);
    assert_int_equal(mm_dec_push(&d, 0), MM_DEC_BUSY);
    assert_true(mm_dec_at_frame_start(&d));
    for (i = 0; i + 1 < n; i++) {
        assert_int_equal(mm_dec_push(&d, wire[i]), MM_DEC_BUSY);
        assert_false(mm_dec_at_frame_start(&d));
    }
    assert_int_equal(mm_dec_push(&d, 0), MM_DEC_FRAME);
    assert_true(mm_dec_at_frame_start(&d));
    /* A frame cut by a flush delimiter is dropped, and the next one decodes. */
    assert_int_equal(push_all(&d, wire, 4), MM_DEC_BUSY);
    assert_int_equal(mm_dec_push(&d, 0), MM_DEC_BAD_COBS);
    assert_true(mm_dec_at_frame_start(&d));
    expect_recovers(&d);
}

/* Encoder against the reference framing for many payloads; then back through the decoder. */
static void test_enc_roundtrip(void **state)
{
    uint32_t rng = 12345;
    unsigned iter;
    (void)state;

    for (iter = 0; iter < 20000; iter++) {
        uint8_t payload[MM_MAX_PAYLOAD], got[64], want[64];
        uint8_t body_len, zero_odds, i;
        size_t gn, wn;
        struct mm_dec d;

#define RND() (rng = rng * 1103515245u + 12345u, (uint8_t)(rng >> 16))
        body_len = (uint8_t)(RND() % (MM_MAX_BODY + 1));
        zero_odds = (uint8_t)(RND() % 4); /* 0: no zeros .. 3: mostly zeros */
        for (i = 0; i < MM_HDR_LEN + body_len; i++) {
            uint8_t b = RND();
            payload[i] = (zero_odds && RND() % 4 < zero_odds) ? 0 : b;
        }
        if (iter < 2) { /* all zeros and no zeros at the largest size */
            memset(payload, iter ? 0xFF : 0x00, sizeof payload);
            body_len = MM_MAX_BODY;
        }
#undef RND
        gn = encode(payload[0], payload[1], payload + MM_HDR_LEN, body_len, got, sizeof got);
        wn = ref_frame(payload, MM_HDR_LEN + body_len, want);
        assert_int_equal(gn, MM_WIRE_LEN(body_len));
        assert_int_equal(gn, wn);
        assert_memory_equal(got, want, wn);
        gn = encode_steps(payload[0], payload[1], payload + MM_HDR_LEN, body_len, got, sizeof got);
        assert_int_equal(gn, wn);
        assert_memory_equal(got, want, wn);

        mm_dec_init(&d);
        if (gn - 1 <= MM_DEC_MAX_ENCODED) {
            assert_int_equal(push_all(&d, got, gn), MM_DEC_FRAME);
            assert_int_equal(mm_dec_payload_len(&d), MM_HDR_LEN + body_len);
            assert_memory_equal(d.buf, payload, MM_HDR_LEN + body_len);
        } else {
            assert_int_equal(push_all(&d, got, gn), MM_DEC_TOO_LONG);
        }
    }
}

static void test_enc_restart(void **state)
{
    static const uint8_t body[3] = { 7, 0x34, 0x12 };
    uint8_t a[64], b[64];
    size_t an, bn;
    struct mm_enc e;
    (void)state;

    an = encode(MM_T_FIRE, 3, body, 3, a, sizeof a);
    /* Restarting an encoder in the middle of a frame starts the new frame cleanly. */
    mm_enc_start(&e, MM_T_QUERY, 1, body, 1);
    (void)mm_enc_next(&e);
    (void)mm_enc_next(&e);
    mm_enc_start(&e, MM_T_FIRE, 3, body, 3);
    for (bn = 0; bn < sizeof b; bn++) {
        int16_t v = mm_enc_next(&e);
        if (v < 0)
            break;
        b[bn] = (uint8_t)v;
    }
    assert_int_equal(an, bn);
    assert_memory_equal(a, b, an);
    /* An empty body still makes a well-formed frame (4 decoded bytes). */
    an = encode(0x7E, 0, NULL, 0, a, sizeof a);
    assert_int_equal(an, MM_WIRE_LEN(0));
}

static void test_msg_check(void **state)
{
    uint8_t p[MM_MAX_PAYLOAD + 2];
    unsigned t;
    size_t i;
    (void)state;

    memset(p, 0, sizeof p);
    assert_int_equal(mm_msg_check(p, 0), MM_MSG_BAD_LENGTH);
    assert_int_equal(mm_msg_check(p, 1), MM_MSG_BAD_LENGTH);
    for (t = 0; t < 256; t++) {
        const struct msg_def *md = NULL;
        uint8_t len;
        for (i = 0; i < N_MSGS; i++)
            if (msgs[i].type == t)
                md = &msgs[i];
        p[0] = (uint8_t)t;
        assert_int_equal(mm_msg_body_len((uint8_t)t), md ? md->len : 0);
        for (len = 2; len <= MM_MAX_PAYLOAD; len++) {
            uint8_t want = !md ? MM_MSG_UNKNOWN_TYPE
                               : (len - MM_HDR_LEN == md->len ? MM_MSG_OK : MM_MSG_BAD_LENGTH);
            assert_int_equal(mm_msg_check(p, len), want);
        }
    }
    /* Every body fits the framing (version 6's HIST_SUMMARY fills MAX_BODY). */
    for (i = 0; i < N_MSGS; i++)
        assert_true(msgs[i].len <= MM_MAX_BODY);
}

/* SPEC.md 0x06: the divisor for BAUD, within 2.5 %. The ATmega2560 in double speed at 16 MHz: clock 2 MHz,
 * divisor UBRR0 + 1 <= 4096. */
static void test_baud_div(void **state)
{
    (void)state;
    assert_int_equal(mm_baud_div(2000000u, 96, 4096u), 208);    /* 9615 baud, +0.16 % */
    assert_int_equal(mm_baud_div(2000000u, 1152, 4096u), 17);   /* 117647 baud, +2.1 %: within */
    assert_int_equal(mm_baud_div(2000000u, 2500, 4096u), 8);    /* 250000 exactly */
    assert_int_equal(mm_baud_div(2000000u, 2304, 4096u), 0);    /* 230400: 222222 or 250000, both too far */
    assert_int_equal(mm_baud_div(2000000u, 3, 4096u), 0);       /* 300: the divisor would be 6667 */
    assert_int_equal(mm_baud_div(2000000u, 0, 4096u), 0);
}

static void test_sizes_and_helpers(void **state)
{
    uint8_t buf[16];
    (void)state;

    assert_int_equal(MM_MAX_PAYLOAD, 42);
    assert_int_equal(MM_MAX_FRAME, 44);
    assert_int_equal(MM_MAX_ENCODED, 45);
    assert_int_equal(MM_MIN_FRAME, 4);
    assert_int_equal(MM_DEC_MAX_ENCODED, MM_DEC_CAPACITY + 1);

    /* Odd offsets: nothing may assume alignment. */
    memset(buf, 0xEE, sizeof buf);
    mm_put_u32(buf + 1, 0x04030201u);
    mm_put_u16(buf + 5, 0x0605u);
    assert_int_equal(buf[0], 0xEE);
    assert_int_equal(buf[1], 1);
    assert_int_equal(buf[4], 4);
    assert_int_equal(buf[6], 6);
    assert_int_equal(buf[7], 0xEE);
    assert_int_equal(mm_get_u32(buf + 1), 0x04030201u);
    assert_int_equal(mm_get_u16(buf + 5), 0x0605u);
    mm_put_u32(buf + 3, 0xFFFFFFFFu);
    assert_int_equal(mm_get_u32(buf + 3), 0xFFFFFFFFu);

    assert_int_equal(mm_seq_gap(0, 1), 0);
    assert_int_equal(mm_seq_gap(254, 255), 0);
    assert_int_equal(mm_seq_gap(255, 0), 0);
    assert_int_equal(mm_seq_gap(254, 1), 2);
    assert_int_equal(mm_seq_gap(1, 5), 3);
    assert_int_equal(mm_seq_gap(5, 5), 255);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_vectors),
        cmocka_unit_test(test_cobs_vectors),
        cmocka_unit_test(test_message_vectors),
        cmocka_unit_test(test_spec_tables),
        cmocka_unit_test(test_stream_vectors),
        cmocka_unit_test(test_dec_too_long),
        cmocka_unit_test(test_dec_bad_cobs_and_short),
        cmocka_unit_test(test_dec_frame_start),
        cmocka_unit_test(test_enc_roundtrip),
        cmocka_unit_test(test_enc_restart),
        cmocka_unit_test(test_msg_check),
        cmocka_unit_test(test_baud_div),
        cmocka_unit_test(test_sizes_and_helpers),
    };
    int failed;

    if (argc > 1)
        vec_dir = argv[1];
    else if (getenv("MM_VECTORS"))
        vec_dir = getenv("MM_VECTORS");
    printf("mmproto tests: decoder capacity %d (max encoded %d), vectors from %s\n", MM_DEC_CAPACITY,
           MM_DEC_MAX_ENCODED, vec_dir);
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    printf("vectors: crc %d, cobs %d, messages %d, streams %d\n", n_crc, n_cobs, n_msg, n_stream);
    printf("SPEC.md tables: %d messages, %d fields, %d error codes, %d wire-table rows\n", n_spec_msgs,
           n_spec_fields, n_spec_errors, n_spec_wire);
    return failed ? 1 : 0;
}

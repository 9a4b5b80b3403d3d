/*
 * libFuzzer harness for the decoder (and, for the resync check, the encoder).
 *
 * Arbitrary bytes go through mm_dec_push one at a time; every result is checked against the
 * reference model of SPEC.md section 6 (tests/refmodel.c), plus these invariants:
 *   - nothing but MM_DEC_BUSY is returned for a non-delimiter byte;
 *   - mm_dec_at_frame_start is true exactly when no byte of the current frame has been pushed;
 *   - a delivered payload fits the capacity and goes through mm_msg_check;
 *   - resync: after the input, a 0x00 and a frame made by mm_enc always decode back exactly.
 * A failed check aborts, which libFuzzer reports as a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmproto.h"
#include "refmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static uint8_t expected_result(enum ref_outcome o)
{
    switch (o) {
    case REF_OK: return MM_DEC_FRAME;
    case REF_TOO_LONG: return MM_DEC_TOO_LONG;
    case REF_BAD_COBS: return MM_DEC_BAD_COBS;
    case REF_TOO_SHORT: return MM_DEC_TOO_SHORT;
    case REF_BAD_CRC: return MM_DEC_BAD_CRC;
    }
    return 0xFF;
}

/* Pushes one byte and checks it against the reference; start is where the current frame began. */
static void push_checked(struct mm_dec *d, const uint8_t *data, size_t start, size_t i)
{
    size_t since = i - start;
    uint8_t r;

    CHECK(mm_dec_at_frame_start(d) == (since == 0));
    r = mm_dec_push(d, data[i]);
    if (data[i] != 0) {
        CHECK(r == MM_DEC_BUSY);
        return;
    }
    if (since == 0) {
        CHECK(r == MM_DEC_BUSY); /* empty frame */
    } else {
        static uint8_t ref_payload[8192];
        size_t ref_len = 0;
        enum ref_outcome o = ref_classify(data + start, since, MM_DEC_MAX_ENCODED, ref_payload, &ref_len);
        CHECK(r == expected_result(o));
        if (r == MM_DEC_FRAME) {
            uint8_t len = mm_dec_payload_len(d);
            uint8_t m = mm_msg_check(d->buf, len);
            CHECK(len >= MM_HDR_LEN && len <= MM_DEC_CAPACITY - MM_CRC_LEN);
            CHECK(len == ref_len && memcmp(d->buf, ref_payload, len) == 0);
            CHECK(m == MM_MSG_OK || m == MM_MSG_UNKNOWN_TYPE || m == MM_MSG_BAD_LENGTH);
            CHECK((m == MM_MSG_UNKNOWN_TYPE) == (mm_msg_body_len(d->buf[0]) == 0));
        }
    }
    CHECK(mm_dec_at_frame_start(d));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t stream[65536 + 64];
    struct mm_dec d;
    struct mm_enc e;
    uint8_t payload[MM_MAX_PAYLOAD], ref_wire[64];
    size_t i, start = 0, n, body_len, ref_n;
    int16_t b;

    if (size > 65536)
        return 0;
    /* The message layer on raw bytes too (its table lookup must stay in bounds for any type). */
    i = mm_msg_check(data, (uint8_t)(size > 0xFF ? 0xFF : size));
    CHECK(i == MM_MSG_OK || i == MM_MSG_UNKNOWN_TYPE || i == MM_MSG_BAD_LENGTH);
    mm_dec_init(&d);
    for (i = 0; i < size; i++) {
        push_checked(&d, data, start, i);
        if (data[i] == 0)
            start = i + 1;
    }

    /* Resync: a flush delimiter, then a frame whose contents come from the input itself. */
    memcpy(stream, data, size);
    n = size;
    stream[n++] = 0;
    body_len = size % (MM_DEC_CAPACITY - MM_MIN_FRAME + 1);
    payload[0] = size ? data[0] : 0x7E;
    payload[1] = (uint8_t)size;
    for (i = 0; i < body_len; i++)
        payload[MM_HDR_LEN + i] = size ? data[(i + 1) % size] : (uint8_t)i;
    mm_enc_start(&e, payload[0], payload[1], payload + MM_HDR_LEN, (uint8_t)body_len);
    while ((b = mm_enc_next(&e)) >= 0) {
        CHECK(n < sizeof stream);
        stream[n++] = (uint8_t)b;
    }
    CHECK(mm_enc_next(&e) == -1);
    ref_n = ref_frame(payload, MM_HDR_LEN + body_len, ref_wire);
    CHECK(ref_n == n - size - 1 && memcmp(ref_wire, stream + size + 1, ref_n) == 0);

    for (i = size; i < n; i++) {
        uint8_t r;
        if (i == size || i + 1 < n) {
            push_checked(&d, stream, start, i);
        } else {
            r = mm_dec_push(&d, stream[i]);
            CHECK(r == MM_DEC_FRAME);
            CHECK(mm_dec_payload_len(&d) == MM_HDR_LEN + body_len);
            CHECK(memcmp(d.buf, payload, MM_HDR_LEN + body_len) == 0);
            /* A valid frame with a type taken from the input: the message layer sees every type. */
            r = mm_msg_check(d.buf, mm_dec_payload_len(&d));
            CHECK(r == (mm_msg_body_len(payload[0]) == 0 ? MM_MSG_UNKNOWN_TYPE
                        : mm_msg_body_len(payload[0]) == body_len ? MM_MSG_OK : MM_MSG_BAD_LENGTH));
        }
        if (stream[i] == 0)
            start = i + 1;
    }
    return 0;
}

/*
 * A deliberately different, non-streaming model of SPEC.md section 6, for cross-checking the
 * library in the tests and the fuzzer: whole-buffer COBS (with the full 0xFF rule), a byte-wise
 * table-free CRC, and the outcome checks written out in the spec's order. Host code only.
 */
#ifndef REFMODEL_H
#define REFMODEL_H

#include <stddef.h>
#include <stdint.h>

enum ref_outcome { REF_OK, REF_TOO_LONG, REF_BAD_COBS, REF_TOO_SHORT, REF_BAD_CRC };

uint16_t ref_crc16(const uint8_t *p, size_t n);
/* Standard COBS encoding of n bytes into out (room for n + n/254 + 1); returns its length. */
size_t ref_cobs_encode(const uint8_t *in, size_t n, uint8_t *out);
/* Standard COBS decoding; returns -1 if a code byte announces more bytes than remain. */
long ref_cobs_decode(const uint8_t *in, size_t n, uint8_t *out);
/* Frame-level outcome of one non-empty encoded frame; on REF_OK the payload is out[0 .. *len). out
 * needs room for n bytes. */
enum ref_outcome ref_classify(const uint8_t *enc, size_t n, size_t max_encoded, uint8_t *out,
                              size_t *len);
/* The wire bytes of a frame: COBS(payload || crc_lo crc_hi) 0x00. Returns the length. */
size_t ref_frame(const uint8_t *payload, size_t n, uint8_t *out);

#endif

#include "refmodel.h"

#include <string.h>

uint16_t ref_crc16(const uint8_t *p, size_t n)
{
    /* The well-known table-free byte-wise form of the 0x1021 CRC, unlike the library's bit loop. */
    unsigned crc = 0xFFFF;
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned x = ((crc >> 8) ^ p[i]) & 0xFF;
        x ^= x >> 4;
        crc = ((crc << 8) ^ (x << 12) ^ (x << 5) ^ x) & 0xFFFF;
    }
    return (uint16_t)crc;
}

size_t ref_cobs_encode(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t code_at = 0, o = 1, i;
    uint8_t code = 1;
    for (i = 0; i < n; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        } else {
            out[o++] = in[i];
            /* a full 254-byte block closes without a zero; a new one starts only if data follows */
            if (++code == 0xFF && i + 1 < n) {
                out[code_at] = code;
                code_at = o++;
                code = 1;
            }
        }
    }
    out[code_at] = code;
    return o;
}

long ref_cobs_decode(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint8_t code = in[i++];
        size_t k;
        if (code == 0 || (size_t)(code - 1) > n - i)
            return -1;
        for (k = 1; k < code; k++)
            out[o++] = in[i++];
        if (code != 0xFF && i < n)
            out[o++] = 0;
    }
    return (long)o;
}

enum ref_outcome ref_classify(const uint8_t *enc, size_t n, size_t max_encoded, uint8_t *out,
                              size_t *len)
{
    long dl;
    size_t pl;
    if (n > max_encoded)
        return REF_TOO_LONG;
    dl = ref_cobs_decode(enc, n, out);
    if (dl < 0)
        return REF_BAD_COBS;
    if (dl < 4)
        return REF_TOO_SHORT;
    pl = (size_t)dl - 2;
    if (ref_crc16(out, pl) != (uint16_t)(out[pl] | out[pl + 1] << 8))
        return REF_BAD_CRC;
    *len = pl;
    return REF_OK;
}

size_t ref_frame(const uint8_t *payload, size_t n, uint8_t *out)
{
    uint8_t tmp[512];
    uint16_t crc = ref_crc16(payload, n);
    size_t len;
    memcpy(tmp, payload, n);
    tmp[n] = (uint8_t)crc;
    tmp[n + 1] = (uint8_t)(crc >> 8);
    len = ref_cobs_encode(tmp, n + 2, out);
    out[len] = 0;
    return len + 1;
}

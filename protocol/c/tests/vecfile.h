/* Reader for the shared vector files (protocol/SPEC.md section 9). Host test code only. */
#ifndef VECFILE_H
#define VECFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VEC_MAX_LINES 256

struct vec_line {
    char *key;  /* first word */
    char *rest; /* everything after it, leading blanks removed ("" if none) */
};

struct vec_record {
    char kind[16];  /* crc, cobs, message, stream */
    char name[128];
    int lineno;     /* line of the keyword, for messages */
    int nlines;
    struct vec_line lines[VEC_MAX_LINES];
};

struct vec_file {
    FILE *f;
    char path[1024];
    int lineno;
};

/* Opens dir/name; returns 0 on success. */
int vec_open(struct vec_file *vf, const char *dir, const char *name);
void vec_close(struct vec_file *vf);
/* Reads the next record: 1 = got one, 0 = end of file. A malformed file aborts the program with a
 * message (a broken vector file must never pass silently). Free with vec_record_free. */
int vec_next(struct vec_file *vf, struct vec_record *r);
void vec_record_free(struct vec_record *r);

/* First line with this key, or NULL. */
const char *vec_get(const struct vec_record *r, const char *key);
/* Parses space-separated two-digit hex bytes, or "-" for none, appending to out (capacity cap,
 * current length *len). Aborts on malformed input or overflow. */
void vec_hex(const char *s, uint8_t *out, size_t cap, size_t *len);
/* Parses the 4-digit hex CRC of a "crc" line. */
uint16_t vec_crc(const char *s);

#endif

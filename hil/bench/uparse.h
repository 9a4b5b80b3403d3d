/*
 * A number from the control channel, parsed strictly: strtoull takes "-1" as 2^64-1, " 5" and "5x" half, and
 * an overflow quietly as the largest value; a grant of cycle -1 then ran to the end of time. parse_u64 takes
 * digits only (decimal, or 0x hex), within 64 bits, and nothing else.
 */
#ifndef MMBENCH_UPARSE_H
#define MMBENCH_UPARSE_H

#include <stdint.h>

/* 0 and *OUT set when S is a whole unsigned number (decimal digits, or 0x and hex digits) that fits in 64
 * bits; -1 otherwise (a sign, a space, an empty string, anything after the digits, an overflow). */
int parse_u64(const char *s, uint64_t *out);

#endif

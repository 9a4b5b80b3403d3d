/*
 * The host's monotonic clock in nanoseconds: the one time base of a normal run (the Python side reads the same clock
 * with time.monotonic_ns), shared by the firing and reading threads and their tests.
 */
#ifndef MMSCHED_NATIVE_MONOTIME_H
#define MMSCHED_NATIVE_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif

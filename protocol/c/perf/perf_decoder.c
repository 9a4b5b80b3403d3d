/*
 * Throughput of the C decoder on the host, on the very stream the Python benchmark decodes
 * (protocol/python/perf/perf_decoder.py writes it), so tools/perf.py can report the ratio of two
 * figures measured in one run. Prints the figures as JSON.
 *
 *     perf_decoder STREAM_FILE
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mmproto.h"

#define RUNS 7

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    FILE *f;
    long size;
    unsigned char *data;
    double rates[RUNS], frame_rates[RUNS];
    unsigned long frames_ok = 0;
    int run;

    if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
        fprintf(stderr, "usage: perf_decoder STREAM_FILE (written by perf_decoder.py)\n");
        return 2;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    rewind(f);
    data = malloc((size_t)size);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "perf_decoder: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(f);
    for (run = 0; run < RUNS; run++) {
        struct mm_dec dec;
        double start, elapsed;
        long i;
        frames_ok = 0;
        mm_dec_init(&dec);
        start = now_s();
        for (i = 0; i < size; i++) {
            if (mm_dec_push(&dec, data[i]) == MM_DEC_FRAME &&
                mm_msg_check(dec.buf, mm_dec_payload_len(&dec)) == MM_MSG_OK)
                frames_ok++;
        }
        elapsed = now_s() - start;
        rates[run] = (double)size / elapsed / 1e6;
        frame_rates[run] = (double)frames_ok / elapsed;
    }
    qsort(rates, RUNS, sizeof rates[0], by_value);
    qsort(frame_rates, RUNS, sizeof frame_rates[0], by_value);
    printf("[{\"name\": \"C decoder throughput (host)\", \"unit\": \"MB/s\", \"median\": %.6g, \"max\": %.6g, "
           "\"runs\": %d, \"note\": \"same stream as the python figure, %ld B\"},\n",
           rates[RUNS / 2], rates[RUNS - 1], RUNS, size);
    printf(" {\"name\": \"C decoder frame rate (host)\", \"unit\": \"frames/s\", \"median\": %.6g, \"max\": %.6g, "
           "\"runs\": %d, \"note\": \"%lu frames ok per pass\"}]\n",
           frame_rates[RUNS / 2], frame_rates[RUNS - 1], RUNS, frames_ok);
    free(data);
    return 0;
}

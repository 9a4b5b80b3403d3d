/*
 * Writes the fuzz seed corpus from the shared vectors: the wire bytes of every messages.vec record
 * and the input of every streams.vec record, one file each. Run through `make fuzz-seeds`; the
 * output (fuzz/corpus/) is committed so that fuzzing needs nothing else.
 *
 * Usage: mkseeds VECTOR_DIR OUT_DIR
 */
#include <stdio.h>
#include <string.h>

#include "vecfile.h"

static int write_seed(const char *dir, const char *prefix, const char *name, const uint8_t *p, size_t n)
{
    char path[1024];
    FILE *f;
    if ((size_t)snprintf(path, sizeof path, "%s/%s_%s", dir, prefix, name) >= sizeof path)
        return -1;
    f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

static int from_file(const char *vdir, const char *file, const char *key, const char *prefix, const char *out)
{
    static uint8_t buf[65536];
    struct vec_file vf;
    struct vec_record r;
    int count = 0, i;

    if (vec_open(&vf, vdir, file) != 0) {
        perror(file);
        return -1;
    }
    while (vec_next(&vf, &r)) {
        size_t n = 0;
        for (i = 0; i < r.nlines; i++)
            if (strcmp(r.lines[i].key, key) == 0)
                vec_hex(r.lines[i].rest, buf, sizeof buf, &n);
        if (write_seed(out, prefix, r.name, buf, n) != 0)
            return -1;
        count++;
        vec_record_free(&r);
    }
    vec_close(&vf);
    return count;
}

int main(int argc, char **argv)
{
    int a, b;
    if (argc != 3) {
        fprintf(stderr, "usage: %s VECTOR_DIR OUT_DIR\n", argv[0]);
        return 2;
    }
    a = from_file(argv[1], "messages.vec", "wire", "msg", argv[2]);
    b = from_file(argv[1], "streams.vec", "input", "stream", argv[2]);
    if (a < 0 || b < 0)
        return 1;
    printf("seeds: %d messages, %d streams\n", a, b);
    return 0;
}

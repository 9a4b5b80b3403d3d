/*
 * cmocka tests of the reading thread (readthread.c) on a pipe and a SOCK_SEQPACKET pair: bytes kept with the stamp
 * of their read (never before the write), in order, nothing lost when the caller is slow, a packet one chunk, the
 * end of the line after the bytes before it, stopping. How soon after a write the stamp comes is the host's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "readthread.h"
#include "monotime.h"

#define MS 1000000LL

static void bytes_come_with_the_stamp_of_their_read(void **state)
{
    int p[2];
    uint8_t buf[64];
    struct mr_chunk c[4];
    int64_t before;
    struct mr_thread *t;
    (void)state;
    assert_int_equal(pipe2(p, O_NONBLOCK), 0);
    t = mr_start(p[0], 0, 0);
    assert_non_null(t);
    assert_int_equal(mr_wait(t, 20 * MS), 0); /* nothing yet */
    before = mono_ns();
    assert_int_equal(write(p[1], "abc", 3), 3);
    assert_int_equal(mr_wait(t, 2000 * MS), 1);
    assert_int_equal(mr_take(t, buf, sizeof buf, c, 4), 1);
    assert_int_equal(c[0].n, 3);
    assert_memory_equal(buf, "abc", 3);
    assert_true(c[0].stamp_ns >= before);
    mr_stop(t);
    close(p[0]);
    close(p[1]);
}

static void a_slow_taker_loses_nothing(void **state)
{
    int p[2];
    uint8_t out[70000], buf[4096];
    struct mr_chunk c[256];
    uint32_t got = 0;
    struct mr_thread *t;
    struct mr_info info;
    (void)state;
    for (uint32_t i = 0; i < sizeof out; i++)
        out[i] = (uint8_t)(i * 7);
    assert_int_equal(pipe(p), 0);
    t = mr_start(p[0], 0, 16384); /* far less than is written: it must wait, not drop */
    assert_non_null(t);
    for (uint32_t off = 0; off < sizeof out;) {
        ssize_t k = write(p[1], out + off, sizeof out - off > 1000 ? 1000 : sizeof out - off);
        assert_true(k > 0);
        off += (uint32_t)k;
        while (got < off && mr_wait(t, 10 * MS) == 1) { /* take only now and then */
            int n = mr_take(t, buf, sizeof buf, c, 256);
            for (int i = 0, pos = 0; i < n; pos += (int)c[i].n, i++) {
                assert_memory_equal(buf + pos, out + got, c[i].n);
                got += c[i].n;
            }
            if (off < sizeof out)
                break;
        }
    }
    while (got < sizeof out && mr_wait(t, 2000 * MS) == 1) {
        int n = mr_take(t, buf, sizeof buf, c, 256);
        for (int i = 0, pos = 0; i < n; pos += (int)c[i].n, i++) {
            assert_memory_equal(buf + pos, out + got, c[i].n);
            got += c[i].n;
        }
    }
    assert_int_equal(got, sizeof out);
    mr_info(t, &info);
    assert_int_equal(info.bytes, sizeof out);
    mr_stop(t);
    close(p[0]);
    close(p[1]);
}

static void a_packet_is_one_chunk_and_the_end_comes_after_it(void **state)
{
    int s[2];
    uint8_t buf[64];
    struct mr_chunk c[4];
    struct mr_thread *t;
    (void)state;
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, s), 0);
    t = mr_start(s[0], 0, 0);
    assert_non_null(t);
    assert_int_equal(send(s[1], "Dxy", 3, 0), 3);
    assert_int_equal(send(s[1], "Dz", 2, 0), 2);
    close(s[1]); /* the far end goes */
    {
        int64_t deadline = mono_ns() + 2000 * MS;
        while (mr_error(t) == 0 && mono_ns() < deadline) {
            int n;
            if (mr_wait(t, 100 * MS) != 1)
                continue;
            n = mr_take(t, buf, sizeof buf, c, 4);
            assert_true(n >= 1);
            assert_int_equal(c[0].n, 3);
            assert_memory_equal(buf, "Dxy", 3);
            if (n == 1) {
                assert_int_equal(mr_wait(t, 2000 * MS), 1);
                assert_int_equal(mr_take(t, buf, sizeof buf, c, 4), 1);
                assert_int_equal(c[0].n, 2);
            } else {
                assert_int_equal(c[1].n, 2);
            }
            break;
        }
    }
    assert_int_equal(mr_wait(t, 2000 * MS), -1); /* then the end, after the bytes before it */
    assert_int_equal(mr_error(t), EPIPE);
    mr_stop(t);
    close(s[0]);
}

static void stopping_a_waiting_thread_is_prompt(void **state)
{
    int p[2];
    int64_t t0;
    struct mr_thread *t;
    struct mr_info info;
    (void)state;
    assert_int_equal(pipe(p), 0);
    t = mr_start(p[0], 0, 0);
    assert_non_null(t);
    mr_info(t, &info);
    assert_true(info.tid > 0);
    assert_int_equal(info.sched_err, 0);
    t0 = mono_ns();
    mr_stop(t);
    assert_true(mono_ns() - t0 < 1000 * MS);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bytes_come_with_the_stamp_of_their_read),
        cmocka_unit_test(a_slow_taker_loses_nothing),
        cmocka_unit_test(a_packet_is_one_chunk_and_the_end_comes_after_it),
        cmocka_unit_test(stopping_a_waiting_thread_is_prompt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

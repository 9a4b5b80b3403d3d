/*
 * cmocka tests of the firing thread (firethread.c) on a pipe: the order of writes, never before their
 * moment, the line's gap, writes for now, a line that takes nothing, a full queue, stopping. Nothing here
 * asserts how soon after a moment a write comes: that is the host's, measured by `make perf`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "firethread.h"
#include "monotime.h"

#define MS 1000000LL

static struct mf_thread *start(int fd, int64_t busy, int64_t gap, int capacity)
{
    struct mf_config c = {fd, 0, busy, gap, 200 * MS, capacity};
    struct mf_thread *t = mf_start(&c);
    assert_non_null(t);
    return t;
}

/* takes stamps until `want` have come (the thread writes them in its own time) */
static int take(struct mf_thread *t, struct mf_stamp *s, int want)
{
    int n = 0;
    int64_t deadline = mono_ns() + 5000 * MS;
    while (n < want && mono_ns() < deadline) {
        n += mf_take(t, s + n, want - n);
        if (n < want)
            usleep(1000);
    }
    return n;
}

static void moments_in_order_and_never_early(void **state)
{
    int p[2];
    struct mf_stamp s[3];
    uint8_t got[3];
    int64_t t0 = mono_ns() + 20 * MS;
    struct mf_thread *t;
    (void)state;
    assert_int_equal(pipe(p), 0);
    t = start(p[1], 0, 0, 64);
    /* added out of order: written by moment */
    assert_int_equal(mf_add(t, 1, t0 + 10 * MS, (const uint8_t *)"a", 1), 0);
    assert_int_equal(mf_add(t, 2, t0, (const uint8_t *)"b", 1), 0);
    assert_int_equal(mf_add(t, 3, t0 + 5 * MS, (const uint8_t *)"c", 1), 0);
    assert_int_equal(take(t, s, 3), 3);
    assert_int_equal(s[0].tag, 2);
    assert_int_equal(s[1].tag, 3);
    assert_int_equal(s[2].tag, 1);
    for (int i = 0; i < 3; i++) {
        assert_true(s[i].woke_ns >= s[i].at_ns); /* an absolute sleep never ends before its moment */
        assert_true(s[i].began_ns >= s[i].woke_ns);
        assert_true(s[i].ended_ns >= s[i].began_ns);
        assert_int_equal(s[i].err, 0);
        assert_int_equal(s[i].written, 1);
    }
    assert_int_equal(read(p[0], got, 3), 3);
    assert_memory_equal(got, "bca", 3);
    mf_free(t);
    close(p[0]);
    close(p[1]);
}

static void busy_stretch_wakes_before_and_writes_at_the_moment(void **state)
{
    int p[2];
    struct mf_stamp s;
    int64_t at = mono_ns() + 30 * MS;
    struct mf_thread *t;
    (void)state;
    assert_int_equal(pipe(p), 0);
    t = start(p[1], 5 * MS, 0, 16);
    assert_int_equal(mf_add(t, 7, at, (const uint8_t *)"x", 1), 0);
    assert_int_equal(take(t, &s, 1), 1);
    assert_true(s.woke_ns >= at - 5 * MS); /* slept to the stretch's start, */
    assert_true(s.began_ns >= at);          /* spun to the moment */
    mf_free(t);
    close(p[0]);
    close(p[1]);
}

static void the_lines_gap_holds_the_second_write(void **state)
{
    int p[2];
    struct mf_stamp s[2];
    int64_t at = mono_ns() + 10 * MS;
    struct mf_thread *t;
    (void)state;
    assert_int_equal(pipe(p), 0);
    t = start(p[1], 0, 3 * MS, 16);
    assert_int_equal(mf_add(t, 1, at, (const uint8_t *)"a", 1), 0);
    assert_int_equal(mf_add(t, 2, at, (const uint8_t *)"b", 1), 0);
    assert_int_equal(take(t, s, 2), 2);
    assert_int_equal(s[0].held, 0);
    assert_int_equal(s[1].held, 1);
    assert_true(s[1].began_ns >= s[0].ended_ns + 3 * MS);
    {
        struct mf_info i;
        mf_info(t, &i);
        assert_int_equal(i.fired, 2);
        assert_int_equal(i.held, 1);
    }
    mf_free(t);
    close(p[0]);
    close(p[1]);
}

static void a_write_for_now_goes_before_a_later_moment(void **state)
{
    int p[2];
    struct mf_stamp now_stamp, s[2];
    uint8_t got[2];
    struct mf_thread *t;
    (void)state;
    assert_int_equal(pipe(p), 0);
    t = start(p[1], 0, 0, 16);
    assert_int_equal(mf_add(t, 1, mono_ns() + 50 * MS, (const uint8_t *)"L", 1), 0);
    assert_int_equal(mf_write_now(t, 2, (const uint8_t *)"N", 1, 1000 * MS, &now_stamp), 0);
    assert_int_equal(now_stamp.tag, 2);
    assert_int_equal(now_stamp.at_ns, 0);
    assert_int_equal(now_stamp.err, 0);
    assert_int_equal(take(t, s, 2), 2); /* its stamp is in the ring too, in write order */
    assert_int_equal(s[0].tag, 2);
    assert_int_equal(s[1].tag, 1);
    assert_int_equal(read(p[0], got, 2), 2);
    assert_memory_equal(got, "NL", 2);
    mf_free(t);
    close(p[0]);
    close(p[1]);
}

static void a_line_that_takes_nothing_fails_the_write_in_time(void **state)
{
    int p[2];
    struct mf_stamp s;
    uint8_t fill[4096];
    struct mf_config c;
    struct mf_thread *t;
    (void)state;
    assert_int_equal(pipe2(p, O_NONBLOCK), 0);
    memset(fill, 0, sizeof fill);
    while (write(p[1], fill, sizeof fill) > 0) /* the pipe full: nobody reads it */
        ;
    c = (struct mf_config){p[1], 0, 0, 0, 20 * MS, 16};
    t = mf_start(&c);
    assert_non_null(t);
    assert_int_equal(mf_write_now(t, 1, (const uint8_t *)"q", 1, 2000 * MS, &s), 0);
    assert_int_equal(s.err, ETIMEDOUT);
    assert_int_equal(s.written, 0);
    assert_true(s.ended_ns - s.began_ns >= 20 * MS);
    mf_free(t);
    close(p[0]);
    close(p[1]);
}

static void a_full_queue_and_an_oversized_write_are_refused(void **state)
{
    int p[2];
    uint8_t big[MF_BYTES + 1];
    int64_t far = mono_ns() + 60000 * MS;
    struct mf_thread *t;
    struct mf_info i;
    (void)state;
    assert_int_equal(pipe(p), 0);
    t = start(p[1], 0, 0, 16);
    for (int k = 0; k < 16; k++)
        assert_int_equal(mf_add(t, (uint64_t)k, far, (const uint8_t *)"z", 1), 0);
    assert_int_equal(mf_add(t, 99, far, (const uint8_t *)"z", 1), -1);
    assert_int_equal(errno, ENOSPC);
    assert_int_equal(mf_pending(t), 16);
    memset(big, 1, sizeof big);
    assert_int_equal(mf_add(t, 100, far, big, sizeof big), -1);
    assert_int_equal(errno, EMSGSIZE);
    {
        int64_t t0 = mono_ns();
        mf_stop(t, &i); /* the queued moments are a minute away: stopping does not wait for them */
        assert_true(mono_ns() - t0 < 1000 * MS);
        mf_free(t);
    }
    assert_int_equal(i.full, 1);
    assert_int_equal(i.fired, 0);
    assert_int_equal(i.slack_ns, 1);
    assert_int_equal(i.sched_err, 0);
    assert_true(i.tid > 0);
    close(p[0]);
    close(p[1]);
}

static void a_moment_already_past_is_an_overrun_not_a_wake_up(void **state)
{
    int p[2];
    struct mf_stamp s[2];
    int64_t t = mono_ns();
    struct mf_thread *th;
    (void)state;
    assert_int_equal(pipe(p), 0);
    th = start(p[1], 0, 0, 16);
    assert_int_equal(mf_add(th, 1, t - 5 * MS, (const uint8_t *)"a", 1), 0);  /* due 5 ms ago */
    assert_int_equal(mf_add(th, 2, t + 20 * MS, (const uint8_t *)"b", 1), 0); /* ahead: slept for */
    assert_int_equal(take(th, s, 2), 2);
    assert_int_equal(s[0].tag, 1);
    assert_int_equal(s[0].slept, 0);
    assert_int_equal(s[1].slept, 1);
    mf_free(th);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moments_in_order_and_never_early),
        cmocka_unit_test(busy_stretch_wakes_before_and_writes_at_the_moment),
        cmocka_unit_test(the_lines_gap_holds_the_second_write),
        cmocka_unit_test(a_write_for_now_goes_before_a_later_moment),
        cmocka_unit_test(a_line_that_takes_nothing_fails_the_write_in_time),
        cmocka_unit_test(a_full_queue_and_an_oversized_write_are_refused),
        cmocka_unit_test(a_moment_already_past_is_an_overrun_not_a_wake_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

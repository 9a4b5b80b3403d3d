/* cmocka tests of uparse.c: the control channel's numbers (a grant's cycle and byte counts) are whole unsigned
 * numbers or refused; "-1" was taken as cycle 2^64-1. Run by `make -C hil/bench unit`. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../uparse.h"

static void takes_whole_numbers(void **state)
{
    uint64_t v = 7;
    (void)state;
    assert_int_equal(parse_u64("0", &v), 0);
    assert_true(v == 0);
    assert_int_equal(parse_u64("16000000", &v), 0);
    assert_true(v == 16000000u);
    assert_int_equal(parse_u64("0x10", &v), 0);
    assert_true(v == 16);
    assert_int_equal(parse_u64("18446744073709551615", &v), 0);
    assert_true(v == UINT64_MAX);
}

static void refuses_signs_spaces_junk_and_overflow(void **state)
{
    const char *bad[] = {"-1", "+5", " 5", "5 ", "5x", "", "x", "18446744073709551616", "99999999999999999999999",
                         "1e9", "0x", NULL};
    int i;
    (void)state;
    for (i = 0; bad[i]; i++) {
        uint64_t v = 42;
        assert_int_equal(parse_u64(bad[i], &v), -1);
        assert_true(v == 42); /* untouched */
    }
    assert_int_equal(parse_u64(NULL, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(takes_whole_numbers),
        cmocka_unit_test(refuses_signs_spaces_junk_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

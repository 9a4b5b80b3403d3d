/* cmocka tests of safefile.c: every file the bench writes goes to a new temporary file beside its target and
 * is renamed over it when complete, so a name planted in a shared folder (a symlink to a file of the user's,
 * a dangling one) is replaced, never written through. Run by `make -C hil/bench unit` (hil `make test`). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../safefile.h"

#define NOBODY 65534

static char dir[64];
static char victim[128];

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* The attack: NAME -> TARGET, as another user planted it (as root, the link is given to nobody). */
static void plant(const char *name, const char *target)
{
    char p[160];
    path_of(p, sizeof p, name);
    assert_int_equal(symlink(target, p), 0);
    if (getuid() == 0)
        assert_int_equal(lchown(p, NOBODY, NOBODY), 0);
}

static void read_file(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t got;
    assert_non_null(f);
    got = fread(buf, 1, n - 1, f);
    buf[got] = 0;
    fclose(f);
}

/* the names in the test folder that end in .tmp (our temporary files) */
static int temps(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)))
        if (strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".tmp"))
            n++;
    closedir(d);
    return n;
}

static int setup(void **state)
{
    FILE *f;
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_safefile.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void victim_unchanged(void)
{
    char buf[64];
    read_file(victim, buf, sizeof buf);
    assert_string_equal(buf, "precious\n");
}

static void commit_puts_the_whole_file_in_place_and_leaves_no_temp(void **state)
{
    char p[160], buf[64];
    struct stat st;
    FILE *f;
    (void)state;
    path_of(p, sizeof p, "lab.vcd");
    f = sf_open(p, 0600);
    assert_non_null(f);
    fputs("part one, ", f);
    assert_int_equal(lstat(p, &st), -1); /* nothing under the name until the file is complete */
    assert_int_equal(temps(), 1);
    fputs("part two", f);
    assert_int_equal(sf_commit(f), 0);
    read_file(p, buf, sizeof buf);
    assert_string_equal(buf, "part one, part two");
    assert_int_equal(temps(), 0);
    assert_int_equal(lstat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
}

static void the_temp_is_named_after_its_target_in_the_same_folder(void **state)
{
    char p[160], name[256] = "";
    DIR *d;
    struct dirent *e;
    FILE *f;
    (void)state;
    path_of(p, sizeof p, "lab.trace");
    f = sf_open(p, 0644);
    assert_non_null(f);
    d = opendir(dir);
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, ".lab.trace.", 11))
            snprintf(name, sizeof name, "%s", e->d_name);
    closedir(d);
    assert_int_equal(strlen(name), strlen(".lab.trace.XXXXXXXX.tmp"));
    assert_string_equal(name + strlen(name) - 4, ".tmp");
    sf_discard(f);
}

static void a_planted_link_is_replaced_never_written_through(void **state)
{
    char p[160], buf[64];
    struct stat st;
    FILE *f;
    (void)state;
    plant("lab.vcd", victim);
    path_of(p, sizeof p, "lab.vcd");
    f = sf_open(p, 0644);
    assert_non_null(f);
    fputs("ours\n", f);
    assert_int_equal(sf_commit(f), 0);
    victim_unchanged();
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    read_file(p, buf, sizeof buf);
    assert_string_equal(buf, "ours\n");
}

static void a_dangling_link_creates_nothing_where_it_points(void **state)
{
    char p[160], nowhere[160];
    struct stat st;
    FILE *f;
    (void)state;
    path_of(nowhere, sizeof nowhere, "created-through-the-link");
    plant("lab.exectrace", nowhere);
    path_of(p, sizeof p, "lab.exectrace");
    f = sf_open(p, 0644);
    assert_non_null(f);
    fputs("x", f);
    assert_int_equal(sf_commit(f), 0);
    assert_int_equal(lstat(nowhere, &st), -1);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
}

static void discard_removes_the_temp_and_keeps_what_the_target_held(void **state)
{
    char p[160], buf[64];
    FILE *f;
    (void)state;
    path_of(p, sizeof p, "ready");
    f = fopen(p, "w");
    fputs("before\n", f);
    fclose(f);
    f = sf_open(p, 0600);
    assert_non_null(f);
    fputs("half", f);
    sf_discard(f);
    read_file(p, buf, sizeof buf);
    assert_string_equal(buf, "before\n");
    assert_int_equal(temps(), 0);
}

static void the_mode_asked_for_is_masked_by_the_umask(void **state)
{
    char p[160];
    struct stat st;
    mode_t old = umask(022);
    FILE *f;
    (void)state;
    path_of(p, sizeof p, "lab.trace");
    f = sf_open(p, 0666);
    assert_non_null(f);
    assert_int_equal(sf_commit(f), 0);
    umask(old);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
}

static void a_directory_under_the_name_is_refused_at_open(void **state)
{
    char p[160];
    (void)state;
    path_of(p, sizeof p, "adir");
    assert_int_equal(mkdir(p, 0700), 0);
    errno = 0;
    assert_null(sf_open(p, 0644));
    assert_int_equal(errno, EISDIR);
    assert_int_equal(temps(), 0);
}

/* a FIFO at the name: refused at once (opening it to write would block until someone reads), left alone */
static void a_fifo_under_the_name_is_refused_at_open(void **state)
{
    char p[160];
    struct stat st;
    (void)state;
    path_of(p, sizeof p, "lab.vcd");
    assert_int_equal(mkfifo(p, 0666), 0);
    errno = 0;
    assert_null(sf_open(p, 0644));
    assert_int_equal(errno, ENXIO);
    assert_string_equal(sf_strerror(ENXIO), "a FIFO, a device or a socket holds the name, not a file: refused");
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(temps(), 0);
}

/* a folder planted as a link (to a folder of the user's): refused, nothing made where it points */
static void a_folder_that_is_a_link_is_refused(void **state)
{
    char p[200], inner[224], victim_dir[160];
    (void)state;
    snprintf(victim_dir, sizeof victim_dir, "%s", victim);
    *strrchr(victim_dir, '/') = 0;
    plant("figures", victim_dir);
    path_of(p, sizeof p, "figures");
    snprintf(inner, sizeof inner, "%s/lab.vcd", p);
    errno = 0;
    assert_null(sf_open(inner, 0644));
    assert_int_equal(errno, ELOOP);
    snprintf(inner, sizeof inner, "%s/lab.vcd", victim_dir);
    assert_int_not_equal(access(inner, F_OK), 0);
}

static void a_commit_that_cannot_rename_removes_its_temp_and_says_why(void **state)
{
    char p[160], inner[200];
    FILE *f;
    (void)state;
    path_of(p, sizeof p, "lab.vcd");
    f = sf_open(p, 0644);
    assert_non_null(f);
    assert_int_equal(mkdir(p, 0700), 0); /* the name taken by a directory meanwhile, with something in it */
    snprintf(inner, sizeof inner, "%s/x", p);
    assert_int_equal(mkdir(inner, 0700), 0);
    errno = 0;
    assert_int_equal(sf_commit(f), -1);
    assert_true(errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST);
    assert_int_equal(temps(), 0);
}

static void an_exit_before_commit_leaves_no_temp_and_no_target(void **state)
{
    char p[160];
    struct stat st;
    pid_t pid;
    int status;
    (void)state;
    path_of(p, sizeof p, "lab.vcd");
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the bench dying with one line (die: exit(2)) while its files are open */
        FILE *f = sf_open(p, 0644);
        if (!f)
            _exit(9);
        fputs("half", f);
        exit(2);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(WEXITSTATUS(status), 2);
    assert_int_equal(lstat(p, &st), -1);
    assert_int_equal(temps(), 0);
}

static void a_file_not_opened_here_is_refused(void **state)
{
    FILE *f = tmpfile();
    (void)state;
    errno = 0;
    assert_int_equal(sf_commit(f), -1);
    assert_int_equal(errno, EBADF);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(commit_puts_the_whole_file_in_place_and_leaves_no_temp, setup, teardown),
        cmocka_unit_test_setup_teardown(the_temp_is_named_after_its_target_in_the_same_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(a_planted_link_is_replaced_never_written_through, setup, teardown),
        cmocka_unit_test_setup_teardown(a_dangling_link_creates_nothing_where_it_points, setup, teardown),
        cmocka_unit_test_setup_teardown(discard_removes_the_temp_and_keeps_what_the_target_held, setup, teardown),
        cmocka_unit_test_setup_teardown(the_mode_asked_for_is_masked_by_the_umask, setup, teardown),
        cmocka_unit_test_setup_teardown(a_directory_under_the_name_is_refused_at_open, setup, teardown),
        cmocka_unit_test_setup_teardown(a_fifo_under_the_name_is_refused_at_open, setup, teardown),
        cmocka_unit_test_setup_teardown(a_folder_that_is_a_link_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_commit_that_cannot_rename_removes_its_temp_and_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(an_exit_before_commit_leaves_no_temp_and_no_target, setup, teardown),
        cmocka_unit_test(a_file_not_opened_here_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

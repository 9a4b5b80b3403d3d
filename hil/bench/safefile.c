/* Files created through a new temporary file and a rename, never through a planted link (see safefile.h). */
#define _GNU_SOURCE /* mkostemps */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The bench has at most four open at once (VCD, --trace, executor trace, ready): a small table, no malloc. */
#define SF_MAX 8
#define SF_PATH 1024

static struct sf {
    FILE *f;
    char path[SF_PATH];
    char tmp[SF_PATH + 16];
} files[SF_MAX];

static int at_exit_set;

/* exit() before a commit (die: one line, exit 2): the temporary files go, the targets stay what they were */
static void remove_uncommitted(void)
{
    int i;
    for (i = 0; i < SF_MAX; i++)
        if (files[i].f) {
            unlink(files[i].tmp);
            files[i].f = NULL;
        }
}

static struct sf *find(FILE *f)
{
    int i;
    for (i = 0; f && i < SF_MAX; i++)
        if (files[i].f == f)
            return &files[i];
    return NULL;
}

/* ".NAME.XXXXXX.tmp" in PATH's own directory: a rename is atomic only within one file system, and a name
 * starting with a dot and ending in .tmp is one no reader takes for a record */
static int temp_template(const char *path, char *tmp, size_t n)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    int k;
    if (!*base) {
        errno = EISDIR;
        return -1;
    }
    k = snprintf(tmp, n, "%.*s.%s.XXXXXX.tmp", dirlen, path, base);
    if (k < 0 || (size_t)k >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* The rename itself durable: fsync the directory that holds it (best effort; not every file system can). */
static void sync_dir_of(const char *path)
{
    char d[SF_PATH];
    const char *slash = strrchr(path, '/');
    int fd;
    if (!slash)
        snprintf(d, sizeof d, ".");
    else
        snprintf(d, sizeof d, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

FILE *sf_open(const char *path, mode_t mode)
{
    struct sf *e = find(NULL);
    struct stat st;
    mode_t mask;
    int fd, i, err;
    for (i = 0; !e && i < SF_MAX; i++)
        if (!files[i].f)
            e = &files[i];
    if (!e) {
        errno = EMFILE;
        return NULL;
    }
    if (strlen(path) >= sizeof e->path) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    /* a directory under the name would only fail the rename at the end, after the whole run: say so now */
    if (!lstat(path, &st) && S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return NULL;
    }
    if (temp_template(path, e->tmp, sizeof e->tmp))
        return NULL;
    /* O_CREAT | O_EXCL under a fresh random name, 0600: it fails on any existing entry, a symlink included,
     * instead of following it (POSIX open(2)), so the bench only ever writes into a file it made itself */
    fd = mkostemps(e->tmp, 4, O_CLOEXEC);
    if (fd < 0)
        return NULL;
    mask = umask(0); /* read it (no call just reads it): the mode as fopen would have made it */
    umask(mask);
    if (fchmod(fd, mode & ~mask) || !(e->f = fdopen(fd, "w"))) {
        err = errno;
        close(fd);
        unlink(e->tmp);
        e->f = NULL;
        errno = err;
        return NULL;
    }
    snprintf(e->path, sizeof e->path, "%s", path);
    if (!at_exit_set)
        at_exit_set = !atexit(remove_uncommitted);
    return e->f;
}

int sf_commit(FILE *f)
{
    struct sf *e = find(f);
    int err = 0;
    if (!e) {
        errno = EBADF;
        return -1;
    }
    /* the data on disk before the name points at it: a crash never leaves NAME holding a part */
    if (fflush(f) || fsync(fileno(f)))
        err = errno;
    if (fclose(f) && !err)
        err = errno;
    e->f = NULL;
    if (!err && rename(e->tmp, e->path))
        err = errno;
    if (err) {
        unlink(e->tmp);
        errno = err;
        return -1;
    }
    sync_dir_of(e->path);
    return 0;
}

void sf_discard(FILE *f)
{
    struct sf *e = find(f);
    if (!e)
        return;
    fclose(f);
    unlink(e->tmp);
    e->f = NULL;
}

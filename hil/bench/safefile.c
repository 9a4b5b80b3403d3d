/* Files created through a new temporary file and a rename, never through a planted link (see safefile.h). */
#define _GNU_SOURCE /* mkostemps */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* The bench has at most four open at once (VCD, --trace, executor trace, ready): a small table, no malloc. */
#define SF_MAX 8
#define SF_PATH 1024

static struct sf {
    FILE *f;
    int dfd;            /* the target's folder, opened without following a link as its last component */
    char path[SF_PATH];
    char base[SF_PATH]; /* the target's name in that folder */
    char tmp[SF_PATH + 32];
} files[SF_MAX];

static int at_exit_set;

/* exit() before a commit (die: one line, exit 2): the temporary files go, the targets stay what they were */
static void remove_uncommitted(void)
{
    int i;
    for (i = 0; i < SF_MAX; i++)
        if (files[i].f) {
            unlinkat(files[i].dfd, files[i].tmp, 0);
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

const char *sf_strerror(int err)
{
    if (err == ENXIO)
        return "a FIFO, a device or a socket holds the name, not a file: refused";
    if (err == ELOOP)
        return "the folder is a symbolic link: refused (give the folder itself)";
    return strerror(err);
}

/* PATH's folder, opened with O_NOFOLLOW (a link planted as its last component is refused: ELOOP), and its
 * name in it (BASE, N bytes) */
static int open_folder(const char *path, char *base, size_t n)
{
    char d[SF_PATH];
    const char *slash = strrchr(path, '/');
    struct stat st;
    int fd;
    if (slash)
        snprintf(d, sizeof d, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        snprintf(d, sizeof d, ".");
    if (!*(slash ? slash + 1 : path)) {
        errno = EISDIR;
        return -1;
    }
    snprintf(base, n, "%s", slash ? slash + 1 : path);
    fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    /* with O_DIRECTORY a link says ENOTDIR: lstat tells which it was */
    if (fd < 0 && errno == ENOTDIR && !lstat(d, &st) && S_ISLNK(st.st_mode))
        errno = ELOOP;
    return fd;
}

/* A new file ".NAME.XXXXXXXX.tmp" in the open folder DFD: O_CREAT | O_EXCL | O_NOFOLLOW under a fresh random
 * name, 0600: it fails on any existing entry, a symlink included, instead of following it (POSIX open(2)), so
 * the bench only ever writes into a file it made itself. A name starting with a dot and ending in .tmp is one
 * no reader takes for a record. */
static int new_temp(int dfd, const char *base, char *tmp, size_t n)
{
    int tries, fd;
    for (tries = 0; tries < 100; tries++) {
        uint32_t r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (uint32_t)rand() ^ (uint32_t)getpid();
        if ((size_t)snprintf(tmp, n, ".%s.%08x.tmp", base, (unsigned)r) >= n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
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
    e->dfd = open_folder(path, e->base, sizeof e->base);
    if (e->dfd < 0)
        return NULL;
    /* a directory under the name would only fail the rename at the end, after the whole run: say so now; a
     * FIFO, a device or a socket is no file to replace: refused (ENXIO, sf_strerror's words) */
    if (!fstatat(e->dfd, e->base, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        close(e->dfd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : ENXIO;
        return NULL;
    }
    fd = new_temp(e->dfd, e->base, e->tmp, sizeof e->tmp);
    if (fd < 0) {
        err = errno;
        close(e->dfd);
        errno = err;
        return NULL;
    }
    mask = umask(0); /* read it (no call just reads it): the mode as fopen would have made it */
    umask(mask);
    if (fchmod(fd, mode & ~mask) || !(e->f = fdopen(fd, "w"))) {
        err = errno;
        close(fd);
        unlinkat(e->dfd, e->tmp, 0);
        close(e->dfd);
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
    if (!err && renameat(e->dfd, e->tmp, e->dfd, e->base))
        err = errno;
    if (err) {
        unlinkat(e->dfd, e->tmp, 0);
        close(e->dfd);
        errno = err;
        return -1;
    }
    (void)fsync(e->dfd); /* the rename itself durable (best effort; not every file system can) */
    close(e->dfd);
    return 0;
}

void sf_discard(FILE *f)
{
    struct sf *e = find(f);
    if (!e)
        return;
    fclose(f);
    unlinkat(e->dfd, e->tmp, 0);
    close(e->dfd);
    e->f = NULL;
}

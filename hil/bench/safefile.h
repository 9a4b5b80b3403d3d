/*
 * The one way the bench creates a file (--vcd, --trace, --exec-trace, `vcd on`, `exectrace on`, ready): the
 * data goes to a new temporary file beside the target, ".NAME.XXXXXXXX.tmp", made with O_CREAT | O_EXCL (which
 * never follows a symlink, dangling or not), and is renamed over NAME once complete. A rename replaces the
 * entry that holds the name, so a link another user planted under NAME in a shared folder is replaced, and
 * the file it points to is never opened, let alone truncated. Until then NAME is what it was; a reader never
 * sees a part. The Python side does the same (analysis/mmanalysis/safefiles.py).
 *
 * On exit without a commit (die(): exit 2) the temporary files are removed; a bench killed outright leaves
 * them under their ".NAME.XXXXXXXX.tmp" name, which no reader takes for a record.
 */
#ifndef MMBENCH_SAFEFILE_H
#define MMBENCH_SAFEFILE_H

#include <stdio.h>
#include <sys/types.h>

/* A stream to write PATH through; MODE (0600, 0666) masked by the umask as open(2) does. PATH's folder is opened
 * without following a link as its last component, and the file made and renamed relative to it. NULL with errno
 * set if the temporary file cannot be made (EISDIR: PATH is a directory; ENXIO: a FIFO, a device or a socket
 * holds the name, refused; ELOOP: the folder is a symbolic link, refused; EMFILE: too many open at once). */
FILE *sf_open(const char *path, mode_t mode);

/* errno in words, with sf_open's own meanings of ENXIO and ELOOP */
const char *sf_strerror(int err);

/* Flushed, fsynced, closed and renamed over its target: 0. -1 with errno if any step failed; the temporary
 * file is then removed and the target is what it was (EBADF: F was not opened by sf_open). */
int sf_commit(FILE *f);

/* Closed and its temporary file removed: the target is what it was. */
void sf_discard(FILE *f);

#endif

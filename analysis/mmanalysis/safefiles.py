"""Every file of a run is created one way, so that a name another user planted in a shared folder (a symlink
to a file of yours, a dangling one, a FIFO) is never written through.

- A file written whole (`atomic_write`) or as a stream (`replacing`) goes to a new temporary file beside its
  target, made by tempfile.mkstemp (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600, ".NAME.XXXXXXXX.tmp": no reader
  takes it for a run), flushed and fsynced (unless the caller says `fsync=False`), given the mode any new file of the user's gets (0666 less the umask:
  0644 under umask 022; mkstemp's 0600 made every run file private), then renamed over the target (os.replace). A rename replaces the
  entry that holds the name, a planted link included, and never writes to where a link points; on an error
  the temporary file is removed and the target is what it was. (A fixed temporary name such as NAME.tmp would
  be a second name to plant.)
- A file moved into place (`move_into`: the bench's executor trace out of its run directory) is given the same
  mode and renamed, or, across file systems, copied through `replacing`.
- A file another process writes into while it runs (`create_new`: the bench's log and final status) is made
  with O_CREAT | O_EXCL | O_NOFOLLOW, in a folder `check_private_dir` accepted.
- `existing(paths)`: the names already taken, a dangling link included (lstat, not stat): `mmrig run` refuses
  them without --force, before anything starts.

hil/bench/safefile.c is the same for the bench's own files (--vcd, --trace, --exec-trace, ready), and
mmbench's check of its --run-dir (hil/bench/main.c) has the rules and the words of `check_private_dir`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator


def _fsync_dir(folder: Path) -> None:
    """The rename itself durable (POSIX); not every platform opens directories."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def umask() -> int:
    """The process's umask, read without changing it where Linux says it (/proc/self/status, since 4.7): setting
    it to read it back would race the other threads' new files."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def replacing(path: Path | str, fsync: bool = True) -> Iterator[BinaryIO]:
    """A binary file to write PATH through: a new temporary file beside it, renamed over PATH when the block
    ends without an error (flushed and fsynced first), removed if it raises. Until then PATH is what it was.
    `fsync=False` for a file whose loss in a crash is caught anyway (a sweep point's files: their hash is
    checked at every start, and an fsync per file would cost more than running the point again)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~umask())
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        _fsync_dir(path.parent)


def atomic_write(path: Path | str, data: bytes, fsync: bool = True) -> None:
    """PATH holds DATA or what it held before, never a part, and never what a planted link points to
    (`fsync`: as `replacing`)."""
    with replacing(path, fsync=fsync) as f:
        f.write(data)


def move_into(src: Path | str, dest: Path | str) -> Path:
    """SRC renamed to DEST (whatever entry holds DEST is replaced, a link's target never written); across file
    systems SRC is copied through `replacing`, then removed. Returns DEST."""
    src, dest = Path(src), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(src, 0o666 & ~umask())   # (SRC: a file of a private run folder, made 0600) as replacing's
        os.rename(src, dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with open(src, "rb") as f_in, replacing(dest) as f_out:
            shutil.copyfileobj(f_in, f_out)
        os.unlink(src)
    return dest


def create_new(path: Path | str) -> BinaryIO:
    """A new file for a process to write into as it runs: FileExistsError if the name is taken (a planted
    link included: O_EXCL never follows one). Mode 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    return os.fdopen(fd, "wb")


def existing(paths: Iterable[Path | str]) -> list[Path]:
    """The paths whose name is taken, by anything: a file, a directory, a link (a dangling one too)."""
    return [Path(p) for p in paths if os.path.lexists(p)]


def check_private_dir(folder: Path | str) -> str | None:
    """None if FOLDER is a real directory of this user that nobody else can write to (made, mode 0700, if it
    is missing); else why not, in the words of mmbench's check of its --run-dir (hil/bench/main.c). Files made
    in such a folder cannot have a name planted under them by someone else."""
    folder = Path(folder)
    try:
        folder.mkdir(mode=0o700, parents=True)
        return None
    except FileExistsError:
        pass
    except OSError as exc:
        return f"cannot create run directory {folder}: {exc.strerror or exc}"
    try:
        st = folder.lstat()
    except OSError as exc:
        return f"cannot stat run directory {folder}: {exc.strerror or exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"run directory {folder} is not a directory (a symlink or a file): refused"
    if st.st_uid != os.getuid():
        return f"run directory {folder} is owned by uid {st.st_uid}, not by this user (uid {os.getuid()}): refused"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"run directory {folder} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o}): "
                "refused")
    return None


__all__ = ["atomic_write", "check_private_dir", "create_new", "existing", "move_into", "replacing"]

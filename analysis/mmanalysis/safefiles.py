"""Every file the project writes is created one way, so that a name another user planted in a shared folder (a
symlink to a file of yours, a dangling one, a FIFO, a device) is never written through, and a folder planted as
a link never sends the files elsewhere.

- The folder a file goes into is opened without following a link as its last component (O_DIRECTORY |
  O_NOFOLLOW: a link there is refused, `RefusedOutput`), and the file is made relative to that open folder, so
  nothing renamed meanwhile moves it. A folder is never made on the way: a folder the user names is made only as
  its own last component (`output_folder`: its parent must exist, `-o /nonexistent/dir/x` is refused), and the
  folders a writer keeps its files in under it are made by that writer (`subfolder`: refused if something else
  holds the name, or another user made it).
- A FIFO, a device or a socket at an output name is refused (`RefusedOutput`) before anything is written: opening
  one would block or do what the device does; a directory at the name is IsADirectoryError.
- A file written whole (`atomic_write`) or as a stream (`replacing`) goes to a new temporary file in that folder
  (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600, ".NAME.XXXXXXXX.tmp": no reader takes it for a run; never truncating
  anyone's file), flushed and fsynced (unless the caller says `fsync=False`), given the mode any new file of the
  user's gets (0666 less the umask: 0644 under umask 022), then renamed over the target. A rename replaces the
  entry that holds the name, a planted link included, and never writes to where a link points; on an error the
  temporary file is removed and the target is what it was. (A fixed temporary name such as NAME.tmp would be a
  second name to plant.)
- A file a process goes on writing after its name exists (`stream`: a run's journal) is made the same way and
  renamed over the name at once; a file appended to across runs (`appending`: a campaign's points.jsonl, its
  lock) is opened only if it is a regular file (never through a link), else made as `stream` makes it.
- A file moved into place (`move_into`: the bench's executor trace out of its run directory) is given the same
  mode and renamed into the opened folder, or, across file systems, copied through `replacing`.
- A file another process writes into while it runs (`create_new`: the bench's log and final status) is made
  with O_CREAT | O_EXCL | O_NOFOLLOW, in a folder `check_private_dir` accepted.
- `existing(paths)`: the names already taken, a dangling link included (lstat, not stat): `mmrig run` refuses
  them without --force, before anything starts; `output_problem(path)`: why a file cannot be made at PATH, in
  words, tried before a long job (the folder, the name, a file made and removed in that folder).

hil/bench/safefile.c is the same for the bench's own files (--vcd, --trace, --exec-trace, ready), and
mmbench's check of its --run-dir (hil/bench/main.c) has the rules and the words of `check_private_dir`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NEW_FLAGS = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class RefusedOutput(OSError):
    """An output the project will not write: a link where a folder is expected, a FIFO, a device or a socket at
    an output name, a folder another user made. An OSError (errno ELOOP, ENXIO, EPERM) whose `strerror` says why
    in words, so every `except OSError` that prints `exc.strerror` says it in one line."""

    def __init__(self, code: int, why: str, path: Path | str) -> None:
        super().__init__(code, why, str(path))


def _special(mode: int) -> str | None:
    """What a name holds that is no file to write through, in words (None: a file, a link or nothing)."""
    for test, words in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return None


def open_folder(folder: Path | str) -> int:
    """FOLDER opened (a descriptor to make files relative to), never through a link as its last component."""
    folder = Path(folder)
    try:
        return os.open(folder, DIR_FLAGS)
    except OSError as exc:
        # with O_DIRECTORY a link says ENOTDIR, not ELOOP: lstat tells which it was
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and folder.is_symlink()):
            raise RefusedOutput(errno.ELOOP, f"{folder} is a symbolic link, not a folder: refused (a link in a "
                                             "shared folder may point anywhere; give the folder itself)", folder) from None
        if exc.errno == errno.ENOTDIR:
            raise NotADirectoryError(errno.ENOTDIR, f"{folder} is not a folder", str(folder)) from None
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(errno.ENOENT, f"no such folder: {folder}", str(folder)) from None
        raise


def _check_name(dfd: int, path: Path) -> None:
    """RefusedOutput for a FIFO, a device or a socket at PATH's name, IsADirectoryError for a folder; a file or a
    link (which the rename replaces) or nothing is fine."""
    try:
        st = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"{path} is a folder", str(path))
    what = _special(st.st_mode)
    if what is not None:
        raise RefusedOutput(errno.ENXIO, f"{path} is {what}, not a file: refused", path)


def _new_temp(dfd: int, name: str, flags: int = os.O_WRONLY) -> tuple[str, int]:
    """A new file ".NAME.XXXXXXXX.tmp" in the open folder DFD, made by us (O_EXCL: never an entry that was
    there, a link included), mode 0600 until it is complete."""
    for _ in range(100):
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return tmp, os.open(tmp, flags | NEW_FLAGS, 0o600, dir_fd=dfd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name for {name}", name)


def _made_in_place(dfd: int, name: str, flags: int = os.O_WRONLY, first: bytes = b"") -> int:
    """A file NAME in the open folder DFD made now, holding FIRST, for its process to go on using (`stream`,
    `appending`): a new temporary file (`_new_temp`) given the mode any new file of the user's gets and renamed
    over NAME at once, so a planted link is replaced and nobody's file truncated. Returns its descriptor (the
    caller closes it); on an error it is closed and removed, and NAME is what it was."""
    tmp, fd = _new_temp(dfd, name, flags)
    try:
        done = 0
        while done < len(first):
            done += os.write(fd, first[done:])
        os.fchmod(fd, 0o666 & ~umask())
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    return fd


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


def _fsync_dir(dfd: int) -> None:
    """The rename itself durable (POSIX); not every file system can."""
    with contextlib.suppress(OSError):
        os.fsync(dfd)


@contextlib.contextmanager
def replacing(path: Path | str, fsync: bool = True) -> Iterator[BinaryIO]:
    """A binary file to write PATH through: a new temporary file in PATH's folder, renamed over PATH when the
    block ends without an error (flushed and fsynced first), removed if it raises. Until then PATH is what it was.
    The folder must exist (`output_folder`, `subfolder`). `fsync=False` for a file whose loss in a crash is caught
    anyway (a sweep point's files: their hash is checked at every start, and an fsync per file would cost more
    than running the point again)."""
    path = Path(path)
    dfd = open_folder(path.parent)
    try:
        _check_name(dfd, path)
        tmp, fd = _new_temp(dfd, path.name)
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
                f.flush()
                os.fchmod(f.fileno(), 0o666 & ~umask())
                if fsync:
                    os.fsync(f.fileno())
            os.rename(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        if fsync:
            _fsync_dir(dfd)
    finally:
        os.close(dfd)


def refuse_early(paths: Iterable[Path | str]) -> None:
    """What `replacing` would raise for the first of PATHS (a FIFO, a device or a socket at its name, a folder, a
    link in place of its folder), raised now: for a command to refuse before its work (a report's figures,
    seconds), not after it."""
    for path in map(Path, paths):
        dfd = open_folder(path.parent)
        try:
            _check_name(dfd, path)
        finally:
            os.close(dfd)


def atomic_write(path: Path | str, data: bytes, fsync: bool = True) -> None:
    """PATH holds DATA or what it held before, never a part, and never what a planted link points to
    (`fsync`: as `replacing`)."""
    with replacing(path, fsync=fsync) as f:
        f.write(data)


def scratch(folder: Path | str | None = None) -> BinaryIO:
    """A file with no name, for this process alone to write and read back (a long run's retired events:
    mmsched.model.eventstore): O_TMPFILE in FOLDER (the system's temporary folder if None), so there is no path
    to plant a link at or for another user to open, and the kernel frees it when it is closed or the process
    dies. Read and write, binary, buffered."""
    fd = os.open(str(folder) if folder is not None else tempfile.gettempdir(), os.O_TMPFILE | os.O_RDWR, 0o600)
    return os.fdopen(fd, "w+b")


def stream(path: Path | str, first: bytes = b"") -> int:
    """PATH made now, holding FIRST, for this process to go on writing (a run's journal: a killed run keeps what
    it wrote): a new temporary file renamed over PATH at once, so a planted link is replaced and nobody's file
    truncated. Returns the descriptor (write-only, unbuffered; the caller closes it)."""
    path = Path(path)
    dfd = open_folder(path.parent)
    try:
        _check_name(dfd, path)
        return _made_in_place(dfd, path.name, first=first)
    finally:
        os.close(dfd)


def appending(path: Path | str) -> int:
    """PATH open to read and append (O_RDWR | O_APPEND): the regular file there, never through a link (refused)
    nor a FIFO or device (refused, without blocking on it), or else a new one made as `stream` makes it."""
    path = Path(path)
    dfd = open_folder(path.parent)
    try:
        _check_name(dfd, path)
        try:
            fd = os.open(path.name, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
                         | os.O_CLOEXEC, dir_fd=dfd)
        except FileNotFoundError:
            return _made_in_place(dfd, path.name, os.O_RDWR | os.O_APPEND)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise RefusedOutput(errno.ELOOP, f"{path} is a symbolic link, not a file: refused", path) from None
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):         # swapped in after the check: still never written
            os.close(fd)
            raise RefusedOutput(errno.ENXIO, f"{path} is {_special(st.st_mode) or 'not a file'}: refused", path)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return fd
    finally:
        os.close(dfd)


def lock_file(path: Path | str) -> int:
    """PATH open read-only to flock (made, mode 0666 less the umask, if missing; shared by every user's process
    that locks it): never through a link (refused, and O_CREAT would make the file a dangling one points to),
    never a FIFO or device (refused without blocking on it). Nothing is written to it."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RefusedOutput(errno.ELOOP, f"{path} is a symbolic link, not a file: refused", path) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise RefusedOutput(errno.ENXIO, f"{path} is {_special(st.st_mode) or 'not a file'}: refused", path)
    return fd


def move_into(src: Path | str, dest: Path | str) -> Path:
    """SRC renamed to DEST (whatever entry holds DEST is replaced, a link's target never written); across file
    systems SRC is copied through `replacing`, then removed. Returns DEST."""
    src, dest = Path(src), Path(dest)
    dfd = open_folder(dest.parent)
    try:
        _check_name(dfd, dest)
        try:
            os.chmod(src, 0o666 & ~umask())   # (SRC: a file of a private run folder, made 0600) as replacing's
            os.rename(src, dest.name, dst_dir_fd=dfd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            with open(src, "rb") as f_in, replacing(dest) as f_out:
                shutil.copyfileobj(f_in, f_out)
            os.unlink(src)
    finally:
        os.close(dfd)
    return dest


def output_folder(folder: Path | str) -> Path:
    """A folder the user named for a command's files (report --out, sweep --out, replay --keep ...): made if it
    is missing (only it: its parent must exist, FileNotFoundError naming it), refused if its name holds a link
    (RefusedOutput) or a file (NotADirectoryError). Returns FOLDER."""
    folder = Path(folder)
    try:
        os.mkdir(folder)
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"no such folder: {folder.parent} (make it first)",
                                str(folder.parent)) from None
    os.close(open_folder(folder))
    return folder


def subfolder(folder: Path | str) -> Path:
    """A folder a writer keeps its files in, under a folder it has checked (report/figures, a campaign's points):
    made by this writer, or else already a real folder this user made; refused otherwise (a link, a file, a
    folder another user made in a shared folder). Returns FOLDER."""
    folder = Path(folder)
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder)
    dfd = open_folder(folder)
    try:
        owner = os.fstat(dfd).st_uid
    finally:
        os.close(dfd)
    if owner != os.getuid():
        raise RefusedOutput(errno.EPERM, f"{folder} was made by uid {owner}, not by this user (uid {os.getuid()}): "
                                         "refused", folder)
    return folder


def output_problem(path: Path | str) -> str | None:
    """Why a file cannot be made at PATH, in words (None: it can): its folder missing, a link or not a folder; a
    folder, a FIFO or a device at its name; a folder no file can be made in (tried: a temporary file made there
    and removed again, not os.access, which root passes for a read-only mount). Nothing is left behind."""
    path = Path(path)
    try:
        dfd = open_folder(path.parent)
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        _check_name(dfd, path)
        tmp, fd = _new_temp(dfd, path.name)
        os.close(fd)
        os.unlink(tmp, dir_fd=dfd)
    except OSError as exc:
        if isinstance(exc, (RefusedOutput, IsADirectoryError)):
            return exc.strerror
        return f"cannot write in {path.parent}: {exc.strerror or exc}"
    finally:
        os.close(dfd)
    return None


def create_new(path: Path | str) -> BinaryIO:
    """A new file for a process to write into as it runs: FileExistsError if the name is taken (a planted
    link included: O_EXCL never follows one). Mode 0600."""
    fd = os.open(path, os.O_WRONLY | NEW_FLAGS, 0o600)
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


__all__ = ["RefusedOutput", "appending", "atomic_write", "check_private_dir", "create_new", "existing", "lock_file",
           "move_into", "open_folder", "output_folder", "output_problem", "refuse_early", "replacing", "scratch",
           "stream", "subfolder"]

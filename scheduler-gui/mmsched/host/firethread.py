"""The native threads (native/firethread.c: normal mode's firing; native/readthread.c: a line's reading) from Python:
the library found or built, and thin typed handles.

`make build` builds `build/native/libmmfire.so` in a checkout (native/Makefile); an installed package builds it
from the sources it carries (mmsched/host/native/) into the user's cache folder on first use, with the same Makefile.
Where neither works (no C compiler) `load()` says why, and normal mode fires from Python instead, saying so.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

NATIVE = Path(__file__).resolve().parent / "native"
LIB_NAME = "libmmfire.so"
MF_BYTES = 320                 # firethread.h: the most bytes one write carries


class _Config(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int), ("priority", ctypes.c_int), ("busy_ns", ctypes.c_int64),
                ("min_gap_ns", ctypes.c_int64), ("write_timeout_ns", ctypes.c_int64), ("capacity", ctypes.c_int)]


class _Stamp(ctypes.Structure):
    _fields_ = [("tag", ctypes.c_uint64), ("at_ns", ctypes.c_int64), ("woke_ns", ctypes.c_int64),
                ("began_ns", ctypes.c_int64), ("ended_ns", ctypes.c_int64), ("size", ctypes.c_uint32),
                ("written", ctypes.c_uint32), ("err", ctypes.c_int32), ("held", ctypes.c_uint32),
                ("slept", ctypes.c_uint32)]


class _Info(ctypes.Structure):
    _fields_ = [("tid", ctypes.c_int), ("sched_err", ctypes.c_int), ("slack_ns", ctypes.c_int),
                ("policy", ctypes.c_int), ("prio", ctypes.c_int), ("cpu_ns", ctypes.c_int64),
                ("fired", ctypes.c_uint64), ("held", ctypes.c_uint64), ("full", ctypes.c_uint64),
                ("stamps_dropped", ctypes.c_uint64)]


class _Chunk(ctypes.Structure):
    _fields_ = [("stamp_ns", ctypes.c_int64), ("n", ctypes.c_uint32)]


class _ReadInfo(ctypes.Structure):
    _fields_ = [("tid", ctypes.c_int), ("sched_err", ctypes.c_int), ("policy", ctypes.c_int), ("prio", ctypes.c_int),
                ("reads", ctypes.c_uint64), ("bytes", ctypes.c_uint64), ("waits_full", ctypes.c_uint64)]


@dataclass(frozen=True)
class Stamp:
    """One write of the thread, on CLOCK_MONOTONIC in seconds (the Link's clock): the moment asked for (None: at
    once), when its sleep ended, just before write() and after it returned; `err` 0 or the errno that failed it."""

    tag: int
    at: float | None
    woke: float
    began: float
    ended: float
    size: int
    written: int
    err: int
    held: bool
    slept: bool     # its moment was still ahead when the thread took it (else an overrun: due already)


@dataclass(frozen=True)
class ThreadInfo:
    tid: int
    sched_err: int
    slack_ns: int
    policy: int
    prio: int
    cpu_s: float
    fired: int
    held: int
    full: int
    stamps_dropped: int


def _stamp(s: _Stamp) -> Stamp:
    return Stamp(int(s.tag), s.at_ns / 1e9 if s.at_ns else None, s.woke_ns / 1e9, s.began_ns / 1e9,
                 s.ended_ns / 1e9, int(s.size), int(s.written), int(s.err), bool(s.held), bool(s.slept))


def _info(i: _Info) -> ThreadInfo:
    return ThreadInfo(i.tid, i.sched_err, i.slack_ns, i.policy, i.prio, i.cpu_ns / 1e9, int(i.fired), int(i.held),
                      int(i.full), int(i.stamps_dropped))


# ---- finding or building the library ---------------------------------------------------------------

def _checkout_out() -> Path | None:
    """build/native of the checkout this package runs from (scheduler-gui/mmsched/host -> the root), or None."""
    root = NATIVE.parents[3]
    return root / "build" / "native" if (root / "Makefile").is_file() and (root / "hil").is_dir() else None


def _cache_out() -> Path:
    sources = ("firethread.c", "firethread.h", "readthread.c", "readthread.h", "monotime.h", "Makefile")
    digest = hashlib.sha256(b"".join((NATIVE / n).read_bytes() for n in sources)).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "mmrig" / "native" / digest


def library_path() -> Path:
    """Where the library is (or is built): the checkout's build/native, else the user's cache."""
    out = _checkout_out() or _cache_out()
    return out / LIB_NAME


def build() -> Path:
    """Builds the library where `library_path` says, if its sources are newer (make decides), one builder at a time
    (parallel test workers); returns its path. Raises OSError with make's words."""
    path = library_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    from mmanalysis.safefiles import lock_file     # as every lock of ours: never through a link, never a FIFO

    with os.fdopen(lock_file(path.parent / ".build.lock"), "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["make", "-s", "-C", str(NATIVE), f"OUT={path.parent}"], capture_output=True, text=True)
    if done.returncode != 0 or not path.is_file():
        words = (done.stderr or done.stdout).strip().splitlines()
        raise OSError(errno.ENOENT, f"cannot build {path.name}: {words[-1] if words else 'make failed'}")
    return path


_lib: ctypes.CDLL | None = None
_lib_why: str | None = None
_lib_lock = threading.Lock()


def load() -> ctypes.CDLL | str:
    """The library, built first if need be; or why it cannot be had (one line)."""
    global _lib, _lib_why
    with _lib_lock:
        if _lib is None and _lib_why is None:
            try:
                lib = ctypes.CDLL(str(build()), use_errno=True)
            except OSError as exc:
                _lib_why = f"the native firing thread is not available ({exc.strerror or exc})"
            else:
                lib.mf_start.restype = ctypes.c_void_p
                lib.mf_start.argtypes = [ctypes.POINTER(_Config)]
                lib.mf_add.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64, ctypes.c_char_p,
                                       ctypes.c_uint32]
                lib.mf_write_now.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_uint32,
                                             ctypes.c_int64, ctypes.POINTER(_Stamp)]
                lib.mf_take.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Stamp), ctypes.c_int]
                lib.mf_pending.argtypes = [ctypes.c_void_p]
                lib.mf_info.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Info)]
                lib.mf_stop.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Info)]
                lib.mf_free.argtypes = [ctypes.c_void_p]
                lib.mr_start.restype = ctypes.c_void_p
                lib.mr_start.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
                lib.mr_wait.argtypes = [ctypes.c_void_p, ctypes.c_int64]
                lib.mr_take.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(_Chunk),
                                        ctypes.c_int]
                lib.mr_error.argtypes = [ctypes.c_void_p]
                lib.mr_unread.argtypes = [ctypes.c_void_p]
                lib.mr_info.argtypes = [ctypes.c_void_p, ctypes.POINTER(_ReadInfo)]
                lib.mr_stop.argtypes = [ctypes.c_void_p]
                _lib = lib
        return _lib if _lib is not None else str(_lib_why)


# ---- one thread --------------------------------------------------------------------------------------

class FireThread:
    """The C thread on descriptor `fd` (the caller keeps the descriptor open until `stop`). Every call lets go of the
    interpreter lock (ctypes), so the thread never waits for Python."""

    TAKE = 256

    def __init__(self, fd: int, priority: int | None, busy_s: float, min_gap_s: float, write_timeout_s: float,
                 capacity: int = 16384) -> None:
        lib = load()
        if isinstance(lib, str):
            raise OSError(errno.ENOENT, lib)
        self._lib = lib
        cfg = _Config(fd, priority or 0, int(busy_s * 1e9), int(min_gap_s * 1e9), int(write_timeout_s * 1e9),
                      capacity)
        handle = lib.mf_start(ctypes.byref(cfg))
        if not handle:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot start the native firing thread: {os.strerror(err)}")
        self._h: int | None = handle
        self._buf = (_Stamp * self.TAKE)()
        self.final: ThreadInfo | None = None

    def add(self, tag: int, at_s: float, data: bytes) -> None:
        """Writes `data` at host time `at_s` (CLOCK_MONOTONIC). Raises OSError (ENOSPC: the queue is full)."""
        if self._lib.mf_add(self._h, tag, max(1, int(round(at_s * 1e9))), data, len(data)):
            err = ctypes.get_errno()
            raise OSError(err, f"native firing thread: {os.strerror(err)}")

    def write_now(self, tag: int, data: bytes, timeout_s: float) -> Stamp:
        """Writes `data` at once (after any write under way) and waits for it; its stamp (also among `take`'s)."""
        out = _Stamp()
        if self._lib.mf_write_now(self._h, tag, data, len(data), int(timeout_s * 1e9), ctypes.byref(out)):
            err = ctypes.get_errno()
            raise OSError(err, f"native firing thread: {os.strerror(err)}")
        return _stamp(out)

    def take(self) -> list[Stamp]:
        """The stamps of the writes done since the last take, in write order."""
        got: list[Stamp] = []
        while self._h is not None:
            n = self._lib.mf_take(self._h, self._buf, self.TAKE)
            got.extend(_stamp(self._buf[i]) for i in range(n))
            if n < self.TAKE:
                break
        return got

    def pending(self) -> int:
        return int(self._lib.mf_pending(self._h)) if self._h and self.final is None else 0

    def info(self) -> ThreadInfo:
        if self.final is not None:
            return self.final
        i = _Info()
        self._lib.mf_info(self._h, ctypes.byref(i))
        return _info(i)

    def stop(self) -> ThreadInfo:
        """Ends the thread (a write under way finishes; the queued ones are dropped); what it did, to its end. The
        stamps not taken yet can still be taken, until `close`."""
        if self.final is None and self._h is not None:
            i = _Info()
            self._lib.mf_stop(self._h, ctypes.byref(i))
            self.final = _info(i)
        assert self.final is not None
        return self.final

    def close(self) -> None:
        """Stops the thread if need be and frees it."""
        if self._h is not None:
            self.stop()
            self._lib.mf_free(self._h)
            self._h = None


class ReadThread:
    """The C reading thread on descriptor `fd` (native/readthread.c): every read stamped as the thread woke for it.
    Every call lets go of the interpreter lock (ctypes)."""

    CHUNKS = 512

    def __init__(self, fd: int, priority: int | None, capacity: int = 1 << 18) -> None:
        lib = load()
        if isinstance(lib, str):
            raise OSError(errno.ENOENT, lib)
        self._lib = lib
        handle = lib.mr_start(fd, priority or 0, capacity)
        if not handle:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot start the native reading thread: {os.strerror(err)}")
        self._h: int | None = handle
        self._buf = ctypes.create_string_buffer(capacity)
        self._cap = capacity
        self._chunks = (_Chunk * self.CHUNKS)()
        i = _ReadInfo()
        lib.mr_info(handle, ctypes.byref(i))
        self.tid, self.sched_err, self.policy, self.prio = i.tid, i.sched_err, i.policy, i.prio

    def wait(self, timeout_s: float) -> int:
        """1: bytes wait; 0: none came within the timeout; -1: the line ended (`error`)."""
        return int(self._lib.mr_wait(self._h, int(timeout_s * 1e9))) if self._h else -1

    def take(self) -> list[tuple[bytes, float]]:
        """The reads so far, oldest first: each one's bytes and its stamp (CLOCK_MONOTONIC, seconds)."""
        if self._h is None:
            return []
        n = self._lib.mr_take(self._h, self._buf, self._cap, self._chunks, self.CHUNKS)
        raw = self._buf.raw
        out, pos = [], 0
        for i in range(n):
            c = self._chunks[i]
            out.append((raw[pos:pos + c.n], c.stamp_ns / 1e9))
            pos += c.n
        return out

    def error(self) -> int:
        """0, or the errno that ended the line (EPIPE: closed at the far end), once every byte before it is taken."""
        return int(self._lib.mr_error(self._h)) if self._h else 0

    def unread(self) -> bool:
        """Whether bytes wait that `take` has not given: read into the ring, or not read from the descriptor yet."""
        return bool(self._lib.mr_unread(self._h)) if self._h else False

    def stop(self) -> None:
        if self._h is not None:
            self._lib.mr_stop(self._h)
            self._h = None


def main() -> int:
    """`python -m mmsched.host.firethread`: builds the library now (make build runs it), prints where."""
    t0 = time.monotonic()
    try:
        path = build()
    except OSError as exc:
        print(f"mmsched.host.firethread: {exc.strerror or exc}")
        return 2
    print(f"native firing thread: {path} ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

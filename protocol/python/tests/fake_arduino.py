"""A fake node on a pty pair that behaves like an Arduino Mega behind its USB port: opening the port
resets it (DTR) into the stock stk500v2 bootloader, which starts the application after a while, unless a
byte reached it meanwhile, which keeps it in the bootloader for seconds (measured in simavr: 0.835 s
alone; a byte at 0.435 s: 9.4 s). The application says HELLO by itself (SPEC.md: seq 0 after each reset),
answers QUERY(HELLO), and, if asked to, sends TIMECODE frames like the profiler (every 71 ms).

The pty's slave side is left closed; the master's reads fail with EIO until someone opens the slave, which
is how the fake sees "the port was opened" (a reset), and again when it is closed.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from dataclasses import dataclass, field

import mmproto as mp

BOOTLOADER_S = 0.8          # the bootloader's wait for a programmer after a reset (simavr: 0.835 s)
HELD_S = 9.0                # how long a byte in that window keeps it in the bootloader (simavr: 9.4 s)
TIMECODE_EVERY_S = 0.071


@dataclass
class FakeArduino:
    answer: mp.Hello
    resets_on_open: bool = True           # False: an adapter without DTR reset (the node keeps running)
    timecodes: bool = False               # the application sends TIMECODE frames
    running_at_start: bool = False        # the application is up before the first open
    master: int = field(init=False)
    path: str = field(init=False)
    resets: int = field(default=0, init=False)
    plugged: bool = field(default=False, init=False)     # someone has the port open
    held: int = field(default=0, init=False)            # resets whose bootloader a byte held
    hellos_sent: int = field(default=0, init=False)
    got: list[tuple[float, mp.Message]] = field(default_factory=list, init=False)   # (since the last reset, frame)
    bytes_in_bootloader: int = field(default=0, init=False)
    _reset_at: float | None = field(default=None, init=False)
    _app_at: float | None = field(default=None, init=False)
    _stop: bool = field(default=False, init=False)
    _seq: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        tty.setraw(slave)                     # as a USB-serial adapter's line is: no echo, no EOF character
        os.close(slave)
        # Non-blocking: select says the master is ready while nobody has the slave open (its read fails with EIO);
        # if the host opens the slave between that select and the read, a blocking read would wait for the host's
        # first byte, and the fake would take that byte (seconds later on a loaded host) for the open's moment.
        os.set_blocking(self.master, False)
        if self.running_at_start:
            self._reset_at = self._app_at = time.monotonic() - 10.0
            self._seq = 1                     # its boot HELLO went to nobody
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    # ---- the node's side ------------------------------------------------------------------------
    def _send(self, message: mp.Message) -> None:
        try:
            os.write(self.master, message.wire(self._seq))
        except OSError:
            return
        self._seq = (self._seq + 1) & 0xFF

    def _reset(self, now: float) -> None:
        self.resets += 1
        self._reset_at = now
        self._app_at = now + BOOTLOADER_S
        self._seq = 0
        self.got.clear()
        self.bytes_in_bootloader = 0
        self._booted = False

    def _serve(self) -> None:
        # The board runs in real time whatever the host does: on a loaded host a starved fake noticed the open
        # late and took the host's first byte for one its bootloader got. Real-time priority where the host
        # grants it (root, or an rtprio limit), as the bench's simulation gets; else as it is.
        try:
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_FIFO, os.sched_param(5))
        except (PermissionError, OSError):
            pass
        dec = mp.StreamDecoder()
        next_tc = 0.0
        tc = 0
        self._booted = self.running_at_start
        while not self._stop:
            ready = select.select([self.master], [], [], 0.01)[0]
            now = time.monotonic()
            data = b""
            if ready:
                try:
                    data = os.read(self.master, 256)
                except BlockingIOError:  # opened since the select: nothing to read yet
                    data = b""
                except OSError:          # EIO: nobody has the port open
                    self.plugged = False
                    time.sleep(0.01)
                    continue
            if not self.plugged:
                self.plugged = True
                if self.resets_on_open:
                    self._reset(now)
            if self._reset_at is None or self._app_at is None:
                continue                  # (resets_on_open=False and not running: a node still unpowered)
            in_bootloader = now < self._app_at
            if data and in_bootloader:
                self.bytes_in_bootloader += len(data)
                if now < self._reset_at + BOOTLOADER_S and self._app_at < self._reset_at + HELD_S:
                    self.held += 1
                    self._app_at = self._reset_at + HELD_S
                continue                  # the bootloader takes the byte; the application never sees it
            if in_bootloader:
                continue
            if not self._booted:
                self._booted = True
                self._send(self.answer)  # the boot HELLO, seq 0
                self.hellos_sent += 1
                next_tc = now
            for r in dec.feed(data):
                self.got.append((now - self._reset_at, r.message))
                if isinstance(r.message, mp.Query) and r.message.what == mp.Hello.TYPE:
                    self._send(self.answer)
                    self.hellos_sent += 1
            if self.timecodes and now >= next_tc:
                tc += 1
                self._send(mp.Timecode(tc))
                next_tc = now + TIMECODE_EVERY_S

    def close(self) -> None:
        self._stop = True
        # the thread must be gone before the descriptor is: its number is reused at once, by the next fake's pty,
        # which a thread still reading it would steal bytes from (a loaded host can starve it for seconds)
        self.thread.join(30)
        if self.thread.is_alive():
            return                       # (leaked rather than handed to another reader)
        try:
            os.close(self.master)
        except OSError:
            pass

    def __enter__(self) -> "FakeArduino":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

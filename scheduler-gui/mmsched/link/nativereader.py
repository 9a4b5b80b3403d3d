"""A link's port read by a C thread (native/readthread.c), for a run whose clock is the host's: each read stamped on
CLOCK_MONOTONIC the moment the thread woke for it, with no interpreter lock on that path, then handed to the link
(`Link._received(data, at)`) by a Python thread in its own time. So the arrival of every frame, the TIMECODEs the
naive PC places its FIREs by above all, is the PC's, not the interpreter's: beside `stress-ng --cpu 1` on the 2-vCPU
VM pyserial's Python reader stamped TIMECODEs a median 19.8 ms after their tick began (readthread.c).

`reader_factory(priority)` is what `mmproto.Link(reader=...)` takes; the thread runs at the firing thread's priority
(normal mode's `-p`: the PC's timecode thread, as the paper has it), through RealtimeKit where the kernel refuses it.
"""

from __future__ import annotations

import errno
import os
import threading
from typing import Any, Callable

from mmproto import Link

from ..host import firethread
from ..host.rtsched import fifo_for, fifo_refused

WAIT_S = 0.05       # the Python side looks at least this often whether the link is being closed


class NativeReader:
    """Reads `port` for `link` from a C thread; `close()` ends both threads and closes the port."""

    def __init__(self, port: Any, link: Link, priority: int | None) -> None:
        self.port, self.link = port, link
        self._thread = firethread.ReadThread(port.fileno(), priority)
        # where the kernel refused SCHED_FIFO, RealtimeKit as for the firing thread; what it got, for a reader
        self.sched_why = None
        if priority is not None and self._thread.sched_err:
            self.sched_why = fifo_for(self._thread.tid, priority,
                                      fifo_refused(priority, os.strerror(self._thread.sched_err)), spins=False)[1]
        self._unpack: Callable[[bytes], bytes] | None = getattr(port, "unpack", None)
        self._closing = False
        self._in_hand = 0           # reads taken from the C thread and not yet handed to the link
        self._pump = threading.Thread(target=self._run, name=f"mmproto-{link.node}-native", daemon=True)
        self._pump.start()

    def _run(self) -> None:
        while not self._closing:
            got = self._thread.wait(WAIT_S)
            if got == 0:
                continue
            reads = self._thread.take()
            self._in_hand = len(reads)
            for raw, at in reads:
                data = self._unpack(raw) if self._unpack is not None else raw
                if data:
                    self.link._received(data, at)
                self._in_hand -= 1
            if got < 0 and not self._closing:
                err = self._thread.error()
                why = "the far end closed the line" if err == errno.EPIPE else os.strerror(err)
                self.link._lost(OSError(err, f"read failed: {why}"))
                return

    def unread(self) -> bool:
        """Whether bytes came that the link has not been handed yet (in the descriptor, the C ring or this side's
        hands): a run that makes an event from what it was handed so far would make it from a stale view."""
        return self._in_hand > 0 or self._thread.unread()

    def close(self) -> None:
        self._closing = True
        if self._pump is not threading.current_thread():
            self._pump.join(30)
        self._thread.stop()
        self.port.close()


def reader_factory(priority: int | None) -> Callable[[Any, Link], NativeReader | None]:
    """A factory for `Link(reader=...)` with the C thread at `priority` (None: as the process is). The native library
    is loaded (built if need be) when the first port opens, not when the links are made (a HIL script's Rig makes
    its links when it is made, and may never open them); where it cannot be had the factory makes no reader and the
    link reads with pyserial's Python thread."""
    def make(port: Any, link: Link) -> NativeReader | None:
        if isinstance(firethread.load(), str):
            return None
        try:
            port.fileno()
        except (AttributeError, OSError, ValueError):
            return None             # a port with no descriptor (loop://): pyserial's thread reads it
        return NativeReader(port, link, priority)
    return make

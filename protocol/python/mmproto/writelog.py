"""What a link wrote, for the run's records of its inputs (mmsched.run.inputlog): each frame's bytes by the stream
they went to (`generation`, the far end's name for the port's byte stream since an open) and its offset in it,
and each write's (generation, offset, size, rate) with the link clock when it began.

The last KEEP writes: a run of hours at 1 kHz writes 3.6 million FIREs an hour, and kept whole (a bytearray per
stream and two arrays, about 50 bytes a FIRE) the record grew with the run. KEEP is the bench's own ring of the
reads it records (hil/bench: 65,536 reads), past which its record of a run's inputs is incomplete anyway; the
writes before the last KEEP are counted (`dropped`) and their bytes gone: a read of them finds none, and a record
made from what is left says so (incomplete, never replayed as if whole)."""

from __future__ import annotations

import array
from collections.abc import Iterator

KEEP = 65_536


class Stream:
    """One stream's bytes as written, read by their offsets in the stream (the ones dropped read as none)."""

    def __init__(self) -> None:
        self.base = 0                    # the stream's offset of data[0]: the bytes before it are dropped
        self.data = bytearray()

    def __getitem__(self, s: slice) -> bytes:
        start, stop = s.start or 0, len(self.data) + self.base if s.stop is None else s.stop
        if start < self.base:            # (a part of it dropped: none of it, so its length says so)
            return b""
        return bytes(self.data[start - self.base:stop - self.base])

    def __bytes__(self) -> bytes:
        return bytes(self.data)


class WriteLog:
    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self.dropped = 0                                  # the writes before the last KEEP
        self.streams: dict[int, Stream] = {}
        self._log = array.array("q")                      # (generation, offset, size, rate) a write
        self._began = array.array("d")                    # the link clock when it began

    def add(self, gen: int, offset: int, wire: bytes, baud: int, began: float) -> None:
        stream = self.streams.get(gen)
        if stream is None:
            stream = self.streams[gen] = Stream()
            stream.base = offset
        stream.data.extend(wire)
        self._log.extend((gen, offset, len(wire), baud))
        self._began.append(began)
        if len(self._began) >= self.keep + self.keep // 4:   # a quarter over: the oldest go, a few times a KEEP
            self._drop(len(self._began) - self.keep)

    def _drop(self, n: int) -> None:
        del self._log[:4 * n]
        del self._began[:n]
        self.dropped += n
        first: dict[int, int] = {}                        # each stream's first offset still written down
        for i in range(0, len(self._log), 4):
            first.setdefault(self._log[i], self._log[i + 1])
        for gen in list(self.streams):
            stream = self.streams[gen]
            if gen not in first:
                del self.streams[gen]
            elif first[gen] > stream.base:
                del stream.data[:first[gen] - stream.base]
                stream.base = first[gen]

    # ---- read as the records read it ----------------------------------------------------------
    def get(self, gen: int, default: bytes | Stream = b"") -> Stream | bytes:
        return self.streams.get(gen, default)

    def __getitem__(self, gen: int) -> Stream:
        return self.streams[gen]

    def __len__(self) -> int:
        return len(self._began)

    def writes(self) -> Iterator[tuple[int, int, int, int, float]]:
        """Each write kept, in order: (generation, offset, size, rate, began)."""
        log = self._log
        for i, began in enumerate(self._began):
            yield log[4 * i], log[4 * i + 1], log[4 * i + 2], log[4 * i + 3], began


__all__ = ["KEEP", "Stream", "WriteLog"]

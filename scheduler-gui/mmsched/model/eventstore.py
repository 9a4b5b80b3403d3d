"""A run's events in the order made, its whole length readable, its memory bounded: the newest in memory as they
are, the older ones (`retire`) pickled in chunks to a file with no name (safefiles.scratch) and read back one
chunk at a time when the run's end goes over them (its summary, histogram, maxima, CSV). A 10^6-event lockstep
run held every event to its end, about 0.9 KB each (an Event, its EventBytes and their numbers: tracemalloc);
retired, one costs 24 bytes of the chunks' index (its chunk's, shared) and its bytes on disk.

A retired event comes back as a copy, read from the file, and a change to that copy is lost, except through
`changing` (the run's end judging them a chunk at a time). So only events the run's end changes through it are
retired (retirement.py decides which and when), and
the places that change an ended event (a FIRED after its RESULT, a fault reaching back) look it up with `held_at`,
which says when it is gone. Not thread-safe beyond what a list is: the run's thread appends and retires; another
thread may take `len` (a poller's progress)."""

from __future__ import annotations

import bisect
import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, overload

from mmanalysis.safefiles import scratch

from .event import Event


class EventStore(Sequence[Event]):
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder                      # where the scratch file goes (None: the system's temporary one)
        self._held: list[Event] = []              # events base .. len-1, in memory
        self._base = 0                            # how many are retired (the first held one's index)
        self._file: BinaryIO | None = None
        self._starts: list[int] = []              # each chunk's first event index, in order
        self._spans: list[tuple[int, int]] = []   # ... and its (offset, length) in the file

    # ---- a list's ------------------------------------------------------------------------------
    def append(self, ev: Event) -> None:
        self._held.append(ev)

    def __len__(self) -> int:
        return self._base + len(self._held)

    @overload
    def __getitem__(self, i: int) -> Event: ...
    @overload
    def __getitem__(self, i: slice) -> list[Event]: ...

    def __getitem__(self, i: int | slice) -> Event | list[Event]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        k = i + n if i < 0 else i
        if not 0 <= k < n:
            raise IndexError(f"event {i} of {n}")
        if k >= self._base:
            return self._held[k - self._base]
        if not self._starts:                            # a tail sent from the run's process (`tail_only`)
            raise IndexError(f"event {k} of {n}: not sent from the run's process (its CSV has it)")
        c = bisect.bisect_right(self._starts, k) - 1
        return self._chunk(c)[k - self._starts[c]]      # a copy: see the module's note

    def __iter__(self) -> Iterator[Event]:
        for c in range(len(self._starts)):
            yield from self._chunk(c)
        yield from list(self._held)               # (a snapshot: the run's thread may append meanwhile)

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or another store) of the same events in the same order, as a list is: a HIL script's
        `run.events == []` reads as it did when the run's events were a list."""
        if not isinstance(other, (list, tuple, EventStore)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]   # (mutable, as a list)

    def __repr__(self) -> str:
        return (f"EventStore({list(self)!r})" if len(self) <= 8 else
                f"EventStore(<{len(self)} events, {self._base} retired to its scratch file>)")

    # ---- retiring --------------------------------------------------------------------------------
    @property
    def retired(self) -> int:
        """How many of the first events are retired (read back from the file, not held)."""
        return self._base

    @property
    def held(self) -> list[Event]:
        """The events in memory (the newest), in order: the run's own objects."""
        return self._held

    def held_at(self, k: int) -> Event | None:
        """Event K as the run holds it, or None: retired (final) or not made."""
        return self._held[k - self._base] if self._base <= k < len(self) else None

    def tail(self, n: int) -> list[Event]:
        """The last N held events (fewer if fewer are held)."""
        return self._held[-n:] if n > 0 else []

    def retire(self, n: int) -> list[Event]:
        """The first N held events out of memory, to the file, as one chunk; returns them. An OSError (no room,
        no O_TMPFILE where the file goes) leaves them held."""
        chunk = self._held[:n]
        if not chunk:
            return chunk
        if self._file is None:
            self._file = scratch(self.folder)
        data = pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL)
        offset = self._file.seek(0, 2)
        self._file.write(data)                    # (an OSError here leaves them held: nothing is lost)
        del self._held[:n]
        self._starts.append(self._base)
        self._spans.append((offset, len(data)))
        self._base += len(chunk)
        return chunk

    def _chunk(self, c: int) -> list[Event]:
        assert self._file is not None
        offset, size = self._spans[c]
        self._file.seek(offset)
        return pickle.loads(self._file.read(size))

    def changing(self) -> Iterator[list[Event]]:
        """Every retired chunk in turn, then the held events: what the caller changed in a retired chunk is written
        back when it asks for the next (one chunk in memory at a time). For a judgement that needs what only the
        run's end has (a paced bench's record of the bytes: retirement.py)."""
        for c in range(len(self._starts)):
            chunk = self._chunk(c)
            yield chunk
            assert self._file is not None
            data = pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL)
            offset = self._file.seek(0, 2)
            self._file.write(data)                # (the old copy stays in the file, unread: the file is scratch)
            self._spans[c] = (offset, len(data))
        yield self._held

    # ---- across a process boundary (the GUI's run process sends its RunResult) ---------------------------
    def __getstate__(self) -> dict:
        """Every event, held: the scratch file is this process's alone and goes with it. (A tail: its events.)"""
        return {"folder": self.folder, "events": list(self) if self.whole else self._held,
                "base": 0 if self.whole else self._base}

    def __setstate__(self, state: dict) -> None:
        self.folder, self._held, self._base, self._file = state["folder"], state["events"], state.get("base", 0), None
        self._starts, self._spans = [], []

    def tail_only(self, n: int) -> "EventStore":
        """The last N events as a store of its length whose older events are not there: what a run's process
        sends of a long run (the GUI shows the newest rows; every event is in the run's CSV). Iterating it gives
        the last N; indexing an older one raises IndexError, saying so."""
        start, events = max(0, len(self) - n), []
        for c, first in enumerate(self._starts):       # (a chunk read once, not once an event)
            if (self._starts[c + 1] if c + 1 < len(self._starts) else self._base) > start:
                events.extend(self._chunk(c)[max(0, start - first):])
        events.extend(self._held[max(0, start - self._base):])
        tail = EventStore(self.folder)
        tail._held, tail._base = events, start
        return tail

    @property
    def whole(self) -> bool:
        """Every event is here, held or retired (not a tail: `tail_only`)."""
        return self._file is not None or not self._base

    def close(self) -> None:
        """Frees the file (the retired events are gone with it); the held ones stay."""
        if self._file is not None:
            self._file.close()
            self._file = None


__all__ = ["EventStore"]

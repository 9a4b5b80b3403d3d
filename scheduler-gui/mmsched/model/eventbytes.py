"""The bytes one event's figure depends on, noted as the event is made: the frame the PC wrote for it (its FIRE or
SCHEDULE), the TIMECODE frame it was placed by or created from, the FIRE that anchored a disciplined estimate and,
with the native firing thread, when its moment was queued. Validity by cause (validity.py) looks each up in the
endpoint's record (byterecord.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .slotpickle import SlotPickle


@dataclass(frozen=True, slots=True)
class Sent(SlotPickle):
    """A frame the PC wrote: to `node`, its first byte at `offset` of the port's stream `gen`, the write begun at
    `at` and returned at `ended` (the run's clock; the host clock on a paced bench; None: not known)."""

    node: str
    offset: int
    at: float
    gen: int = 1
    size: int = 1          # its bytes on the wire (offset .. offset + size - 1)
    ended: float | None = None

    @property
    def returned(self) -> float:
        """When the PC's write call returned (where not known, when it began)."""
        return self.at if self.ended is None else self.ended


@dataclass(frozen=True, slots=True)
class Basis(SlotPickle):
    """The TIMECODE frame of tick `tick`: the PC estimated the tick began at `start` and had the frame
    complete at `arrived` (the run's clock)."""

    tick: int
    start: float
    arrived: float


@dataclass(frozen=True, slots=True)
class Fed(SlotPickle):
    """Normal mode's native firing: when the run handed the firing thread the moment `aimed` (run clock). A moment
    handed over after it had passed could not be met by any thread: how late is the run's own loop's, not the PC's
    wake-up (nativefirer.py)."""

    at: float
    aimed: float


@dataclass(slots=True)
class EventBytes(SlotPickle):
    """The bytes one event's figure depends on, noted as the event is made (see the module's text)."""

    sent: Sent | None = None        # its FIRE (normal) or SCHEDULE (mixed)
    basis: Basis | None = None      # the TIMECODE frame it was placed by (normal, naive) or created from (mixed)
    anchor: Sent | None = None      # disciplined normal mode: the FIRE whose bound anchored the servo
    created_at: float | None = None
    fed: Fed | None = None          # normal mode, the native thread: when its moment was queued

"""The schedule generator (paper section 4, the "scheduling timer" and its sliders): which event id
and tag the next event gets, and whether one may be created now.

- ids 0..7 sequential or random, never one that is still in flight (created, not yet terminal);
- a cap on events in flight; an event that cannot get an id or would exceed the cap is not created
  (counted in `skipped`), so a slow link stretches the schedule instead of overloading the executor;
- tags 16-bit, wrapping past 0xFEFF to 0: 0xFF00..0xFFFF are the rig's own calibration probes (PROBE_TAGS),
  whose RESULTs the run takes for the calibration (a run of 65,280 events or more reached them before).

Normal mode on a schedule grid (grid.py) makes one event every moment, up to tens of thousands a minute: there
ids need not differ (the profiler stamps each FIRE as it comes, and the FIRE's tag tells events apart, so one in
flight never holds up another) and there is no cap (`unique_ids=False`, `max_in_flight=None`); an event still in
flight at its deadline ends anyway.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

N_IDS = 8
PROBE_TAGS = range(0xFF00, 0x10000)   # never an event's: the calibration's FIREs (calibration.py)


@dataclass
class Generator:
    random_ids: bool = False
    max_in_flight: int | None = 8     # None: no cap
    seed: int = 1
    first_tag: int = 1
    unique_ids: bool = True           # False: an id may be in flight more than once (a normal-mode grid)
    in_flight_ids: dict[int, int] = field(default_factory=dict, init=False)  # event_id -> how many in flight
    in_flight: int = field(default=0, init=False)
    skipped: int = field(default=0, init=False)
    created: int = field(default=0, init=False)
    _next_seq_id: int = field(default=0, init=False)
    _next_tag: int = field(default=0, init=False)
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._next_tag = self.first_tag & 0xFFFF

    def next(self) -> tuple[int, int] | None:
        """(tag, event_id) for a new event, or None (and `skipped` + 1) if none may be created now."""
        if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
            self.skipped += 1
            return None
        free = [i for i in range(N_IDS) if not self.unique_ids or not self.in_flight_ids.get(i)]
        if not free:
            self.skipped += 1
            return None
        if self.random_ids:
            eid = self._rng.choice(free)
        else:
            eid = next(i % N_IDS for i in range(self._next_seq_id, self._next_seq_id + N_IDS) if i % N_IDS in free)
            self._next_seq_id = (eid + 1) % N_IDS
        tag = self._next_tag
        self._next_tag = (self._next_tag + 1) & 0xFFFF
        if self._next_tag in PROBE_TAGS:
            self._next_tag = 0
        self.in_flight_ids[eid] = self.in_flight_ids.get(eid, 0) + 1
        self.in_flight += 1
        self.created += 1
        return tag, eid

    def adopt(self, event_id: int) -> None:
        """An event the executor created itself (verification mode) is one of the run's: its id is in flight."""
        self.in_flight_ids[event_id] = self.in_flight_ids.get(event_id, 0) + 1
        self.in_flight += 1
        self.created += 1

    def done(self, event_id: int) -> None:
        """An event with this id ended (any outcome): its id is free again."""
        n = self.in_flight_ids.get(event_id, 0)
        if n <= 0:
            raise AssertionError(f"event id {event_id} was not in flight")
        self.in_flight_ids[event_id] = n - 1
        self.in_flight -= 1

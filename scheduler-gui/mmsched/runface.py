"""What the run's own rooms (nodesetup, calibration, deadlines, recovery, sidecar) see of the Runner: its state
and the few verbs they use. A Protocol, so those rooms depend on this face and not on runner.py, which imports
them (runner.Runner has every member below)."""

from __future__ import annotations

import queue
from typing import Any, Callable, Protocol

import mmproto as mp
from mmproto import Arrival, Item

from .config import RunConfig
from .endpoint import Endpoint, Reason
from .event import Event
from .faults import FaultLedger
from .ownstall import StallWatch
from .recovery import Recovery
from .runstate import RunState
from .session import Session
from .validity import Sent


class RunFace(Protocol):
    cfg: RunConfig
    endpoint: Endpoint
    session: Session
    state: RunState | None
    events: list[Event]
    faults: FaultLedger
    invalid: list[Reason]
    counters: dict[str, int]
    counters_before: dict[str, Any]
    node_counters: dict[str, Any]

    fires_sent: dict[float, Sent]
    images: dict[str, Any] | None
    histogram_us: float | None
    own_stalls: StallWatch

    @property
    def inbox(self) -> "queue.Queue[Item]": ...

    def now(self) -> float: ...

    def rel(self, t: float) -> float: ...

    def count(self, key: str, n: int = 1) -> None: ...

    def say(self, text: str) -> None: ...

    def wait_item(self, want: type, node: str, timeout: float,
                  where: Callable[[Any], bool] | None = None) -> Arrival: ...

    def handle(self, item: Item) -> int | None: ...

    def in_flight(self) -> list[Event]: ...

    def end(self, ev: Event, outcome: str, reason: str | None) -> None: ...

    def join(self, pairs: list[tuple[Event, mp.Result]]) -> None: ...

    def notify(self, kind: str, obj: Any) -> None: ...

    def create(self, now: float, moment: tuple[int, int] | None = None) -> bool: ...

    def new_event(self, tag: int, event_id: int, mode: str, distance: int, scheduled_tc: int, created_tc: int,
                  phase: float | None, accounted: bool = True, at: float | None = None) -> Event: ...

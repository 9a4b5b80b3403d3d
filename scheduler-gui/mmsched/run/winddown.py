"""The nodes' wind-down after a run's events: the profiler's histogram's final report (a series measured on its
histogram), the executor back to idle, and both nodes' COUNTERS at the end, which the run's verdict judges against
the ones read at set-up (nodesetup.py). Best effort: a dead link says nothing, and the frames that come meanwhile
go to the run's handling of a frame (`Handle`: Runner.handle), which late frames cannot break."""

from __future__ import annotations

from typing import Any, Callable

import mmproto as mp
from mmproto import Arrival, Item, LinkError

from ..verdict import profhist
from ..model.config import RunConfig
from ..link.endpoint import Endpoint
from .runstate import RunState
from ..link.session import Session

# The run's handling of one frame that arrives after its events (Runner.handle)
Handle = Callable[[Item], Any]


def finish_nodes(cfg: RunConfig, st: RunState | None, session: Session, endpoint: Endpoint, handle: Handle,
                 node_counters: dict[str, Any]) -> None:
    """The profiler's histogram's final report, executor back to idle, then COUNTERS from both nodes into
    `node_counters` (best effort: a dead link says nothing); the frames that come meanwhile go to `handle`."""
    finish_profiler_histogram(st, session, endpoint, handle)
    try:
        if session.alive("executor") and cfg.mode != "normal":
            session.send("executor", mp.Mode(mode=mp.ExecutorMode.IDLE, dispatch=mp.Dispatch[cfg.dispatch.upper()],
                                             distance=0, period=0, random_ids=0))
    except LinkError:
        pass
    asked = []
    for name, link in session.links.items():
        try:
            if link.vanished is None and link.hello is not None:
                link.send(mp.Query(what=mp.Counters.TYPE))
                asked.append(name)
        except LinkError:
            pass
    deadline = endpoint.clock() + 0.5
    while asked and endpoint.clock() < deadline and any(n not in node_counters for n in asked):
        item = endpoint.next_item(session.inbox, 0.05)
        if isinstance(item, Arrival) and isinstance(item.message, mp.Counters):
            node_counters[item.node] = dict(item.message.__dict__)
        elif isinstance(item, Arrival) and st is not None:
            try:
                handle(item)
            except Exception:  # noqa: BLE001 - late frames after the run cannot change it
                pass


def finish_profiler_histogram(st: RunState | None, session: Session, endpoint: Endpoint, handle: Handle) -> None:
    """Ends the profiler's series (HIST_ARM count 0) and takes its final full report (profhist.py): best effort,
    a histogram with no final report says so in the sidecar."""
    hist = st.profiler_hist if st is not None else None
    if hist is None or hist.final or not session.alive("profiler"):
        return
    try:
        session.send("profiler", profhist.end_message())
    except LinkError:
        return
    deadline = endpoint.clock() + profhist.FINAL_WAIT_S
    while not hist.final and endpoint.clock() < deadline:
        item = endpoint.next_item(session.inbox, 0.05)
        if isinstance(item, Arrival):
            try:
                handle(item)
            except Exception:  # noqa: BLE001 - late frames after the run cannot change it
                pass

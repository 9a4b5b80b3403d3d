"""What a finished run has, for its judgement and the files that describe it: the run's end (finish.py) judges
its events from this, and the sidecar (sidecar.py) and the records of its inputs (inputlog.py) are assembled from
it, not from the runner. Taken once the nodes have wound down and the links are closed; the judgement then ends
the events still in flight and adds to `invalid` (the same lists the run kept)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmproto import Link

from ..model.config import RunConfig
from ..model.reason import Reason
from ..model.event import Event
from ..verdict.faults import FaultLedger
from .runstate import RunState


@dataclass(frozen=True)
class RunRecord:
    cfg: RunConfig
    state: RunState | None                 # None: the run ended before the handshake
    events: list[Event]
    counters: dict[str, int]               # the scheduler's own (tally.py)
    node_counters: dict[str, Any]          # the nodes' COUNTERS at the end, by node
    counters_before: dict[str, Any]        # ... and at set-up, before the run's events (nodesetup.py)
    invalid: list[Reason]
    faults: FaultLedger
    link_faults: list[dict[str, Any]]      # the links that went away (recovery.py)
    links: dict[str, Link]                 # by node: what each wrote, and when
    hellos: dict[str, Any]                 # the nodes' HELLOs, by node
    link_counters: dict[str, Any]          # the links' decoders and reconnects (Session.counters)
    identity: dict[str, Any]               # the endpoint's (Endpoint.identity)
    baud: int                              # the endpoint's starting rate (a run with no state has no other)
    wall_clock: bool                       # the run's clock is the host's (Endpoint.wall_clock)
    trace_files: dict[str, Path] | None    # a traced run's executor traces (Endpoint.trace_files)
    images: dict[str, Any] | None          # the images the endpoint ran, by node (and "bench")
    histogram_us: float | None             # the latency histogram's bin width (None: the mode's default)


__all__ = ["RunRecord"]

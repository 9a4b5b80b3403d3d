"""The executor trace as a Perfetto trace: open it in the Perfetto UI (ui.perfetto.dev, "Open
trace file"; it runs in the browser, nothing is uploaded) or load it with Perfetto's trace processor.

Tracks, under one "executor" group:
  cpu              what the core ran, segment by segment (a task, an interrupt, or asleep): the Gantt row
  task <name>      one track per FreeRTOS task: a slice per instance (switch in .. switch out)
  isr <name>       one track per interrupt vector: a slice per stretch its handler ran
  timecode         the timecode port the executor sees (a counter: the 8-bit value)
  events           instants: each event edge the executor drives ("fired id N"), and, when the run's CSV is
                   given, each event's scheduled moment (the start of its scheduled tick) with its outcome

Timestamps are nanoseconds from the trace's first cycle, rounded to the nanosecond (one cycle is 62.5 ns at
16 MHz: the rounding error is at most 0.5 ns); each slice carries its exact cycles as arguments.

Written with the perfetto package's own protos (perfetto.protos...perfetto_trace_pb2), streamed packet by
packet, so a long trace is never held whole in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (CounterDescriptor, Trace, TracePacket,
                                                             TrackDescriptor, TrackEvent)
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

from .exectrace import ExecTrace, event_edges, extended_ticks, instances, timecode_edges, timeline
from .safefiles import replacing

SEQ = 1                      # our one packet sequence
ROOT = 1                     # track uuids: fixed ones below 100, per-task/vector ones from 100


def write(tr: ExecTrace, path: Path, events: Any = None) -> dict[str, int]:
    """Writes the Perfetto trace of `tr` to `path`; `events` (optional) is the run's rows (a DataFrame
    with event, tag, event_id, scheduled_tc, outcome, reason, latency_us) for their scheduled moments.
    Returns counts of what was written."""
    ns = lambda cycle: round((cycle - tr.start) * 1e9 / tr.cpu_hz)   # noqa: E731
    counts = {"packets": 0, "slices": 0, "instants": 0, "counter_values": 0}
    # a new temporary file beside PATH, renamed over it at the end (safefiles: never through a planted link)
    with replacing(path) as f:
        b = StreamingTraceProtoBuilder(f)

        def packet(ts: int | None = None) -> TracePacket:
            p = b.create_packet()
            p.trusted_packet_sequence_id = SEQ
            if ts is not None:
                p.timestamp = ts
            return p

        def put(p: TracePacket) -> None:
            b.write_packet(p)
            counts["packets"] += 1

        def track(uuid: int, name: str, parent: int | None = ROOT, counter: bool = False) -> None:
            p = packet()
            d: TrackDescriptor = p.track_descriptor
            d.uuid, d.name = uuid, name
            if parent is not None:
                d.parent_uuid = parent
            if counter:
                d.counter.CopyFrom(CounterDescriptor())
            put(p)

        def slice_(uuid: int, name: str, a: int, z: int, args: dict[str, int] | None = None) -> None:
            p = packet(ns(a))
            e: TrackEvent = p.track_event
            e.type, e.track_uuid, e.name = TrackEvent.TYPE_SLICE_BEGIN, uuid, name
            for k, v in (args or {}).items():
                d = e.debug_annotations.add()
                d.name, d.uint_value = k, v
            put(p)
            p = packet(ns(z))
            p.track_event.type, p.track_event.track_uuid = TrackEvent.TYPE_SLICE_END, uuid
            put(p)
            counts["slices"] += 1

        def instant(uuid: int, name: str, at: int, args: dict[str, Any]) -> None:
            p = packet(ns(at))
            e = p.track_event
            e.type, e.track_uuid, e.name = TrackEvent.TYPE_INSTANT, uuid, name
            for k, v in args.items():
                d = e.debug_annotations.add()
                d.name = k
                if isinstance(v, str):
                    d.string_value = v
                elif isinstance(v, float):
                    d.double_value = v
                else:
                    d.int_value = int(v)
            put(p)
            counts["instants"] += 1

        # tracks
        p = packet()
        p.incremental_state_cleared = True
        p.first_packet_on_sequence = True
        p.track_descriptor.uuid, p.track_descriptor.name = ROOT, f"executor ({tr.cpu_hz / 1e6:g} MHz, bench trace)"
        put(p)
        CPU, TC, EV = 2, 3, 4
        track(CPU, "cpu")
        segs = timeline(tr)
        inst = instances(tr, segs)
        uuids = {key: 100 + i for i, key in enumerate(sorted(inst, key=lambda k: (k[0] != "isr", k[1])))}
        for (kind, name), u in uuids.items():
            track(u, f"{kind} {name}")
        track(TC, "timecode", counter=True)
        track(EV, "events")
        # the Gantt row, then each task and vector
        for sg in segs:
            slice_(CPU, sg.name, sg.start, sg.end, {"start_cycle": sg.start, "cycles": sg.end - sg.start})
        # an interrupt's track shows when its handler ran (under FreeRTOS's port a switch inside it leaves
        # it open while other tasks run: its entry-to-return spans may overlap, its running pieces do not)
        for sg in segs:
            if sg.kind == "isr" and ("isr", sg.name) in uuids:
                slice_(uuids[("isr", sg.name)], sg.name, sg.start, sg.end,
                       {"start_cycle": sg.start, "cycles": sg.end - sg.start, "interrupt": sg.irq or 0})
        for key, rows in inst.items():
            if key[0] != "task":
                continue
            for a, z, ran in rows:
                slice_(uuids[key], key[1], a, z, {"start_cycle": a, "cycles": z - a, "ran_cycles": ran})
        for c, v in timecode_edges(tr):
            p = packet(ns(c))
            p.track_event.type, p.track_event.track_uuid = TrackEvent.TYPE_COUNTER, TC
            p.track_event.counter_value = v
            put(p)
            counts["counter_values"] += 1
        for c, eid in event_edges(tr):
            instant(EV, f"fired id {eid}", c, {"cycle": c, "event_id": eid})
        if events is not None and len(events):
            ticks = extended_ticks(tr, events["scheduled_tc"].astype(int))
            at = {t: c for c, t in ticks}
            for row in events.itertuples(index=False):
                c = at.get(int(row.scheduled_tc))
                if c is None:
                    continue
                lat = getattr(row, "latency_us", None)
                args: dict[str, Any] = {"event": int(row.event), "tag": int(row.tag), "scheduled_tc": int(row.scheduled_tc),
                                        "outcome": str(row.outcome)}
                if isinstance(row.reason, str):
                    args["reason"] = row.reason
                if lat == lat and lat is not None:           # not NaN
                    args["latency_us"] = float(lat)
                instant(EV, f"scheduled event {int(row.event)} ({row.outcome})", c, args)
    return counts


def read_back(path: Path) -> Trace:
    """The trace parsed with Perfetto's own protos (what a test, or a curious user, checks it with)."""
    t = Trace()
    t.ParseFromString(path.read_bytes())
    return t

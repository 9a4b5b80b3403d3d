"""What a Dask worker runs for `mmrig sweep` (mmrig.sweep.campaign): one point, a normal run on a bench of its own
(`run_point`), and the Dask task itself, a few consecutive points in one task (`run_points`).

`run_point` writes the run into a temporary folder on the machine it runs on and returns its files' bytes
with the summary, so the client writes them into the campaign folder whether the worker shares its
filesystem or not (docs/campaigns.md). It never raises for a run that went wrong: a bench that could not
start, a port that failed, comes back as `error` (the point failed; the campaign goes on)."""

from __future__ import annotations

import datetime as dt
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Callable


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _where() -> str:
    """host:pid, and the Dask worker's name and address when a Dask worker runs this (in the worker's point
    host, mmrig.sweep.pointhost: the worker's, and the host's pid)."""
    from mmrig.sweep import pointhost

    if pointhost.WORKER:
        return f"{pointhost.WORKER}, point host {os.getpid()}"
    here = f"{socket.gethostname()}:{os.getpid()}"
    try:
        from distributed import get_worker

        w = get_worker()
        return f"{here} (dask worker {w.name} {w.address})"
    except (ImportError, ValueError):
        return here


ATTEMPT_TOPIC = "mmrig-sweep-attempt"   # the Dask event a point logs when it begins (run counts of re-run points)


def _note_attempt(stem: str) -> None:
    """Tells the client, through the Dask scheduler's events, that the point `stem` began: a point Dask runs
    again after its worker died shows each start in its `runs`. Nothing outside a Dask worker."""
    try:
        from distributed import get_worker

        w = get_worker()
        w.log_event(ATTEMPT_TOPIC, {"key": str(w.get_current_task()), "point": stem, "worker": w.address})
    except Exception:  # noqa: BLE001 - not in a worker, or an older distributed: runs counts 1
        pass


def run_point(cfg_fields: dict[str, Any], out_stem: str, *, paced: bool = False,
              profiler_kind: str = "avr") -> dict[str, Any]:
    """One point: RunConfig(**cfg_fields) in lockstep (or paced, on the paced bench; with the bench's profiler
    `profiler_kind`, avr or the paper's 8051), its run named and
    written as `out_stem`. Returns {summary, valid, invalid_reason, csv, json (bytes), worker, mmrig_version,
    started, ended, wall_s} or {error, ...}."""
    from mmproto import LinkError
    from mmsched import __version__
    from mmsched.model.config import RunConfig
    from mmsched.link.endpoint import EndpointError
    from mmsched.run.runner import Runner

    from mmrig.endpoints import Target, bench_images, choose_endpoint

    base = {"worker": _where(), "mmrig_version": __version__, "started": _now()}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mmrig-sweep-") as tmp:
        out = Path(tmp) / out_stem
        try:
            cfg = RunConfig(**{**cfg_fields, "name": out_stem, "out": out})
        except (TypeError, ValueError) as exc:
            return {**base, "error": f"bad point: {exc}", "ended": _now(), "wall_s": time.monotonic() - t0}
        target = Target.of(lockstep=not paced, profiler_kind=profiler_kind)
        endpoint = choose_endpoint(target)
        images = bench_images(target)
        try:
            result = Runner(cfg, endpoint, None, images=images).run()
        except (LinkError, EndpointError, OSError) as exc:
            try:
                endpoint.close()
            except Exception:  # noqa: BLE001 - best effort: the error reported is the one that matters
                pass
            return {**base, "error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                    "ended": _now(), "wall_s": time.monotonic() - t0}
        assert result.csv_path is not None and result.json_path is not None
        return {**base, "summary": result.summary, "valid": result.valid,
                "invalid_reason": result.sidecar.get("invalid_reason"),
                "csv": result.csv_path.read_bytes(), "json": result.json_path.read_bytes(),
                "ended": _now(), "wall_s": time.monotonic() - t0}


def run_points(run_point: Callable[..., dict[str, Any]], items: list[tuple[dict[str, Any], str]], *,
               paced: bool = False, profiler_kind: str = "avr") -> list[dict[str, Any]]:
    """The Dask task of `mmrig sweep`: `run_point(fields, stem, paced=, profiler_kind=)` for each (fields, stem)
    of `items`, one after the other, in the worker's point host (mmrig.sweep.pointhost: a process of its own,
    started again every few hundred points), their results in the same order. Each point's start is noted to
    the client (`_note_attempt`) as it is handed to the host.

    Several points a task, not one: each task costs the client a Dask round trip (~5 ms of its CPU on the
    2-vCPU VM) and the worker its bookkeeping of a task."""
    from mmrig.sweep.pointhost import run_in_host

    where = _where()
    out = []
    for fields, stem in items:
        _note_attempt(stem)
        out.append(run_in_host(run_point, fields, stem, where, paced=paced, profiler_kind=profiler_kind))
    return out

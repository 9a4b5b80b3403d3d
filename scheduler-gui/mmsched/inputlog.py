"""The run's record of its inputs (`NAME.inputs`: mmanalysis.inputrecord, docs/data-format.md), written beside its
CSV: the bytes each link wrote (mmproto.Link.written) joined to the endpoint's reads of them with the virtual cycle
each entered its line (a paced bench's Verdict.inputs), the images' hashes and the bench's options. With it the
bench computes the run again with no PC in the loop (`mmrig replay`). Boards and a lockstep bench keep no record
of when the bytes entered (a lockstep run is made again by running it again): no file then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmanalysis.inputrecord import InputRecord, join, write

from .endpoint import Verdict
from .runface import RunFace


def record_inputs(r: RunFace, verdict: Verdict, sidecar: dict[str, Any], out: Path) -> dict[str, Any] | None:
    """Writes OUT.inputs; returns the sidecar's `inputs` section (None: the endpoint keeps no record). A record
    that lost reads (the bench's ring, 65,536 reads, or bytes no link wrote) says so: `complete` false, and a
    replay of it refuses."""
    if verdict.inputs is None:
        return None
    written = {name: link.written for name, link in r.session.links.items()}
    reads, missing = join(verdict.inputs, written)
    firmware = (sidecar.get("environment") or {}).get("firmware") or {}
    target = sidecar.get("target") or {}
    header = {"run": sidecar.get("name"), "mode": r.cfg.mode, "baud": r.cfg.baud,
              "images": {k: (firmware.get(k) or {}).get("sha256") for k in ("profiler", "executor", "bench")},
              "target": {k: target.get(k) for k in ("profiler_kind", "ppm", "arduino", "paced")},
              "dropped": verdict.inputs_dropped, "missing": missing}
    path = out.with_suffix(".inputs")
    try:
        write(path, InputRecord(header, reads))
    except OSError as exc:
        return {"file": None, "error": exc.strerror or str(exc)}
    return {"file": path.name, "reads": len(reads), "bytes": sum(len(x.data) for x in reads),
            "dropped": verdict.inputs_dropped, "missing": missing,
            "complete": verdict.inputs_dropped == 0 and missing == 0}


__all__ = ["record_inputs"]

"""A sweep campaign's record of its points (docs/campaigns.md), as `mmrig.sweep.campaign.Campaign` keeps it:

- `FOLDER/points.jsonl` (`PointStore`): append-only, one flat JSON line each time a point's state changes, written
  with one write() and flushed at once, fsynced at most every second and when closed; a last line a crash cut
  short is cut off when the store opens; the last line of a point is its state
  (`mmanalysis.sweepplots.read_point_records` reads it back);
- `FOLDER/campaign.json`: the definition, sessions and status, and a snapshot of every point's entry, rewritten
  atomically (fsynced) when a session starts and ends and, during a run, at most every SNAPSHOT_MIN_S and never
  more than SNAPSHOT_SHARE of the client's time (`PointsRecord.maybe_save`);
- a point's own files (`Campaign.record`: mmanalysis.safefiles.atomic_write with fsync=False): replaced whole,
  not fsynced (their hash is checked at every start).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from mmanalysis.safefiles import appending, atomic_write, output_folder, subfolder
from mmanalysis.sweepplots import CAMPAIGN_FILE, POINTS_FILE, record_of

FORMAT_VERSION = 2          # 2: the points' record in points.jsonl (1: only in campaign.json, still read)
SNAPSHOT_MIN_S = 5.0         # campaign.json's points snapshot: at most this often during a run ...
SNAPSHOT_SHARE = 0.02        # ... and never more than this share of the client's time ...
SNAPSHOT_POINT_S = 0.0005    # ... nor more than this much a point: a share of the time alone made the snapshot
                             # ~6 ms of the client's CPU a point at 10,000 points done 0.3 s apart (2026-11-28)


_ENCODE = json.JSONEncoder(default=str).encode


def campaign_bytes(doc: dict[str, Any]) -> bytes:
    """campaign.json's text: each top-level key on a line of its own, each point's entry on one line under
    "points". Python's json module encodes in C only without `indent`: the indented form (indent=1, as before)
    took 0.61 s of CPU at 10,000 points, pure Python; this one 0.12 s (measured 2026-11-28), the same JSON."""
    lines = []
    for k, v in doc.items():
        if k == "points" and isinstance(v, dict) and v:
            inner = ",\n".join(f"  {_ENCODE(name)}: {_ENCODE(e)}" for name, e in v.items())
            lines.append(f' {_ENCODE(k)}: {{\n{inner}\n }}')
        else:
            lines.append(f" {_ENCODE(k)}: {_ENCODE(v)}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode()


class PointStore:
    """FOLDER/points.jsonl, append-only: one line per change of a point's state, written with one write() and
    flushed (a reader sees whole lines), fsynced at most every `fsync_s` and when closed. A last line a crash
    cut short is cut off when the store opens."""

    def __init__(self, path: Path, fsync_s: float = 1.0) -> None:
        self.path = path
        self.fsync_s = fsync_s
        self.fd: int | None = None
        self._synced = 0.0
        self._dirty = False

    def open(self) -> "PointStore":
        if self.fd is None:
            self.fd = appending(self.path)     # the file there, never through a link nor a FIFO; else a new one
            size = os.fstat(self.fd).st_size
            if size and os.pread(self.fd, 1, size - 1) != b"\n":
                data = self.path.read_bytes()         # a line a crash cut short: rare, read it all once
                os.ftruncate(self.fd, data.rfind(b"\n") + 1)
            self._synced = time.monotonic()
        return self

    def append(self, rec: dict[str, Any]) -> None:
        assert self.fd is not None
        os.write(self.fd, (json.dumps(rec, default=str, separators=(",", ":")) + "\n").encode())
        self._dirty = True
        if time.monotonic() - self._synced >= self.fsync_s:
            self.sync()

    def sync(self) -> None:
        if self.fd is not None and self._dirty:
            os.fsync(self.fd)
            self._dirty = False
        self._synced = time.monotonic()

    def close(self) -> None:
        if self.fd is not None:
            self.sync()
            os.close(self.fd)
            self.fd = None


class PointsRecord:
    """The record half of `Campaign` (a dataclass with these fields): points.jsonl and campaign.json's snapshot."""

    folder: Path
    doc: dict[str, Any]
    store: PointStore | None
    _saved_at: float
    _save_s: float
    _since_save: int

    @property
    def path(self) -> Path:
        return self.folder / CAMPAIGN_FILE

    @property
    def points_path(self) -> Path:
        return self.folder / POINTS_FILE

    @property
    def points_dir(self) -> Path:
        return self.folder / "points"

    def save(self) -> None:
        """campaign.json, atomically (fsynced), with its points' snapshot."""
        t0 = time.monotonic()
        output_folder(self.folder)         # made if missing (its parent must exist), never through a planted link
        self.doc["format_version"] = FORMAT_VERSION
        self.doc["points_file"] = POINTS_FILE
        atomic_write(self.path, campaign_bytes(self.doc))
        self._saved_at = time.monotonic()
        self._save_s = self._saved_at - t0
        self._since_save = 0

    def maybe_save(self) -> None:
        """campaign.json again if its snapshot is old enough: every SNAPSHOT_MIN_S at most, never more than
        SNAPSHOT_SHARE of the time, and never more than SNAPSHOT_POINT_S of it a point (at 10,000 points one save
        takes about 0.15 s: one every 300 points then)."""
        self._since_save += 1
        if (time.monotonic() - self._saved_at >= max(SNAPSHOT_MIN_S, self._save_s / SNAPSHOT_SHARE)
                and self._since_save * SNAPSHOT_POINT_S >= self._save_s):
            self.save()

    def open_store(self) -> PointStore:
        """points.jsonl, open to append; a campaign of format version 1 (no points.jsonl) has its points that
        ran written into it first."""
        if self.store is None:
            subfolder(self.points_dir)
            fresh = not self.points_path.exists()
            self.store = PointStore(self.points_path).open()
            if fresh:
                for name, e in self.doc.get("points", {}).items():
                    if e.get("state") in ("done", "failed", "refused"):
                        self.append(name, e)
        return self.store

    def append(self, name: str, entry: dict[str, Any]) -> None:
        assert self.store is not None
        self.store.append(record_of(name, entry))

    def close_store(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

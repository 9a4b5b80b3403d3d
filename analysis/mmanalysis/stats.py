"""Summary statistics per run and per group (mode, distance, load condition: idle, cpu, ... all; profiler kind:
avr or 8051, never pooled, since the 8051's polled stamps add tens of us that the AVR's input capture does not).

Latency statistics are over `ok` and `late` rows only (docs/data-format.md); `early`, `missed` and `lost` are counted
in their own columns, never folded in. Variance is the sample variance (ddof=1), in us^2 and, to compare with the
paper (whose variances are in ms^2), in ms^2. Percentiles interpolate linearly (numpy's default). Jitter follows
Kohout, "Hardware Support for Real-Time Operating Systems" (2002): |actual interval - intended interval| between
consecutive measured events of one run, i.e. |latency_i - latency_(i-1)|; we give its mean and its maximum.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .latstats import STAT_NAMES, latency_stats
from .reader import RunSet, profiler_kind
from .schema import OUTCOMES, load_condition

GROUP = ["mode", "distance", "load", "profiler_kind"]


def summarize(data: RunSet | pd.DataFrame, by: str | list[str] = "run", valid_only: bool | None = None) -> pd.DataFrame:
    """One row per run (by="run") or per group (by="group" = mode, distance, load; or any column list).

    Columns: the keys; events and one count per outcome; ok_share (ok / events); unmeasurable (events whose
    bytes a host stall displaced, left out of the figures); n (ok + late, measurable);
    mean/var/std/min/p50/p90/p99/p999/max in us (var_us2) and in ticks (var_ticks2); var_ms2; jitter_mean_us,
    jitter_max_us. With a RunSet, runs whose sidecar says valid=false are left out of group summaries
    (valid_only defaults to True unless by="run", where a `valid` column says which is which).
    """
    df, meta = (data.df, data.meta) if isinstance(data, RunSet) else (data, None)
    keys = GROUP if by == "group" else [by] if isinstance(by, str) else list(by)
    if by == "group" and "profiler_kind" not in df:    # a bare DataFrame not from read_runs: no kind to group by
        keys = [k for k in keys if k != "profiler_kind"]
    if valid_only is None:
        valid_only = keys != ["run"]
    if valid_only and meta is not None:
        bad = [r for r, m in meta.items() if not m.get("valid", True)]
        if bad:
            df = df[~df["run"].isin(bad)]
    if len(keys) == 1 and isinstance(df[keys[0]].dtype, pd.CategoricalDtype):
        codes = df[keys[0]].cat.codes.to_numpy()
        cats = df[keys[0]].cat.categories
        # per run: every run of the RunSet gets a row, even one with no events
        used = np.arange(len(cats)) if keys == ["run"] else np.unique(codes)
        key_rows = [{keys[0]: cats[c]} for c in used]
        remap = np.full(len(cats), -1)
        remap[used] = np.arange(len(used))
        codes = remap[codes]
    else:
        g = df.groupby(keys, observed=True, sort=True)
        codes = g.ngroup().to_numpy()
        key_rows = [dict(zip(keys, k if isinstance(k, tuple) else (k,))) for k in g.size().index.to_list()]
    ngroups = len(key_rows)
    if ngroups == 0:  # nothing left (e.g. every run invalid)
        cols = keys + ["events", *OUTCOMES, "ok_share", "unmeasurable", "n"] + [f"{k}_us2" if k == "var" else f"{k}_us" for k in STAT_NAMES[1:]] \
            + ["var_ms2"] + [f"{k}_ticks2" if k == "var" else f"{k}_ticks" for k in STAT_NAMES[1:]] + ["jitter_mean_us", "jitter_max_us"]
        return pd.DataFrame(columns=cols)

    oc = df["outcome"].cat.codes.to_numpy().astype(np.int64)
    counts = np.bincount(codes * len(OUTCOMES) + oc, minlength=ngroups * len(OUTCOMES)).reshape(ngroups, -1)
    measurable = df["measurable"].to_numpy(dtype=bool)
    measured = ((oc == 0) | (oc == 1)) & measurable  # ok, late, and measurable
    lat_us = df["latency_us"].to_numpy()
    lat_ticks = df["latency_ticks"].to_numpy()
    jit = df["jitter_us"].to_numpy()

    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(ngroups + 1))
    rows = []
    for gi, key in enumerate(key_rows):
        idx = order[bounds[gi]:bounds[gi + 1]]
        unmeasurable = int((~measurable[idx]).sum())
        idx = idx[measured[idx]]
        su, st = latency_stats(lat_us[idx]), latency_stats(lat_ticks[idx])
        j = jit[idx]
        j = j[~np.isnan(j)]
        row = dict(key)
        events = int(counts[gi].sum())
        row["events"] = events
        row.update({o: int(c) for o, c in zip(OUTCOMES, counts[gi])})
        row["ok_share"] = counts[gi][0] / events if events else np.nan
        row["unmeasurable"] = unmeasurable
        row["n"] = su["n"]
        for k in STAT_NAMES[1:]:
            row[f"{k}_us2" if k == "var" else f"{k}_us"] = su[k]
        row["var_ms2"] = su["var"] / 1e6
        for k in STAT_NAMES[1:]:
            row[f"{k}_ticks2" if k == "var" else f"{k}_ticks"] = st[k]
        row["jitter_mean_us"] = float(j.mean()) if len(j) else np.nan
        row["jitter_max_us"] = float(j.max()) if len(j) else np.nan
        if meta is not None and keys == ["run"]:
            m = meta.get(str(key["run"]), {})
            row["valid"] = bool(m.get("valid", True))
            cfg = m.get("config", {})
            row["mode"], row["distance"] = cfg.get("mode"), cfg.get("distance")
            row["load"] = load_condition(cfg.get("load"))
            row["profiler_kind"] = profiler_kind(m)
        rows.append(row)
    out = pd.DataFrame(rows)
    if "run" in out:
        out["run"] = out["run"].astype(str)
    return out

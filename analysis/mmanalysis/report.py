"""Comparison report: Markdown + HTML, a table against the paper's section 7, the figures.

The paper (seeds/000, section 7) gives means in ms and variances in ms^2 (it writes "variance of 36.52 ms"
for normal mode; only ms^2 makes that consistent with its other figures). We keep both units explicit:
every variance column says its unit.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from . import plots, profilereport, sweepplots
from .csvsafe import write_frame
from .reader import RunSet, read_runs
from .schema import load_condition
from .stats import summarize


@dataclass(frozen=True)
class PaperRow:
    key: str
    section: str
    experiment: str
    match: Callable[[dict], bool]  # run config -> belongs to this experiment
    mean_us: float | None
    var_ms2: float | None
    note: str

    @property
    def var_us2(self) -> float | None:
        return None if self.var_ms2 is None else self.var_ms2 * 1e6


def _cfg(mode=None, distance=None, load=None):
    """LOAD: a condition's name (True/False: all/idle, as sidecars before named loads said)."""
    want = None if load is None else load_condition(load)

    def match(c: dict) -> bool:
        return ((mode is None or c.get("mode") == mode) and (distance is None or c.get("distance") == distance)
                and (want is None or load_condition(c.get("load")) == want))
    return match


PAPER: tuple[PaperRow, ...] = (
    PaperRow("executor", "7.2", "executor only (verification)", _cfg("verification"), 39.1, 0.004809,
             "0.0391 ms mean, variance 0.004809 ms^2"),
    PaperRow("normal", "7.3", "normal mode (PC fires), 1 tick ahead", _cfg("normal"), 14465.0, 36.52,
             "14.465 ms mean, variance 36.52 ms^2 (the paper writes 'ms'); same further ahead"),
    PaperRow("mixed1", "7.4", "mixed, 1 tick ahead", _cfg("mixed", 1, "idle"), None, None,
             "unacceptable: only about half of the readings under 1 ms (SCHEDULE sometimes took > 71 ms)"),
    PaperRow("mixed2", "7.4", "mixed, 2 ticks ahead", _cfg("mixed", 2, "idle"), 43.0, 0.000378,
             "0.0430 ms mean, variance 0.000378 ms^2"),
    PaperRow("loaded", "7.5", "mixed, 2 ticks ahead, PC under heavy load", _cfg("mixed", None, "heavy"), 47.03, 0.001035,
             "0.04703 ms mean, variance 0.001035 ms^2"),
)

COMPARE_HEADERS = ["section", "experiment", "paper mean (us)", "paper var (ms^2)", "paper var (us^2)", "runs",
                   "events", "n (ok+late)", "mean (us)", "var (ms^2)", "var (us^2)", "std (us)", "p99 (us)",
                   "max (us)", "jitter max (us)", "ok / events", "early", "missed", "lost", "verdict"]


def _fmt(x, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float):
        if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e7):
            return f"{x:.{digits}g}"
        return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:,.{max(digits - len(str(int(abs(x)))), 1)}f}".rstrip("0").rstrip(".")
    return str(x)


def verdict(row: PaperRow, s: pd.Series | None) -> str:
    if s is None or s["events"] == 0:
        return "no run"
    unmeasured = int(s["early"] + s["missed"] + s["lost"])
    tail = f"; {unmeasured} of {int(s['events'])} events early/missed/lost" if unmeasured else ""
    return _verdict(row, s) + tail


def _verdict(row: PaperRow, s: pd.Series) -> str:
    if row.key == "mixed1":
        share = s["ok_share"]
        return f"{share:.0%} of events ok (paper: about half under 1 ms): " + ("better" if share > 0.5 else "not better")
    if s["n"] < 2:
        return "too few measured events"
    mean_ok, var_ok = s["mean_us"] < row.mean_us, s["var_us2"] < row.var_us2
    if mean_ok and var_ok:
        return "beats the paper (mean and variance lower)"
    return "does not beat the paper: " + ", ".join(w for w, ok in (("mean", mean_ok), ("variance", var_ok)) if not ok) \
        + " not lower"


def comparison(data: RunSet) -> pd.DataFrame:
    """The table against the paper: one row per section 7 experiment, our valid runs that match it pooled.

    When the matching runs differ in event generation (aligned / free), each generation gets its own row:
    pooling them would mix two different experiments."""
    valid = set(data.valid_runs())
    rows = []
    for p in PAPER:
        matched = [r for r in data.runs if p.match(data.meta[r].get("config", {}))]
        runs = [r for r in matched if r in valid]
        invalid = [r for r in matched if r not in valid]
        gens = sorted({str(data.meta[r]["config"].get("generation")) for r in runs})
        split = [(g, [r for r in runs if str(data.meta[r]["config"].get("generation")) == g]) for g in gens] \
            if len(gens) > 1 else [(None, runs)]
        for gen, group in split:
            s = None
            if group:
                sub = RunSet(data.df[data.df["run"].isin(group)].assign(_all="all"), {r: data.meta[r] for r in group})
                res = summarize(sub, by="_all", valid_only=False)
                s = res.iloc[0] if len(res) else None
            get = (lambda k: s[k]) if s is not None else (lambda k: None)
            v = verdict(p, s)
            if s is None and group:
                v = "no events in these runs"
            elif s is None and invalid:
                v = f"no valid run ({len(invalid)} invalid: {', '.join(invalid)})"
            rows.append({
                "section": p.section, "experiment": p.experiment + (f" (generation {gen})" if gen else ""),
                "paper mean (us)": p.mean_us, "paper var (ms^2)": p.var_ms2, "paper var (us^2)": p.var_us2,
                "runs": ", ".join(group) or "-", "events": get("events"), "n (ok+late)": get("n"),
                "mean (us)": get("mean_us"), "var (ms^2)": get("var_ms2"), "var (us^2)": get("var_us2"),
                "std (us)": get("std_us"), "p99 (us)": get("p99_us"), "max (us)": get("max_us"),
                "jitter max (us)": get("jitter_max_us"), "ok / events": get("ok_share"), "early": get("early"),
                "missed": get("missed"), "lost": get("lost"), "verdict": v, "paper says": p.note,
            })
    return pd.DataFrame(rows)


def consistency(data: RunSet, per_run: pd.DataFrame) -> list[str]:
    """Where a sidecar's own summary disagrees with what we recompute from its CSV."""
    problems = []
    for _, r in per_run.iterrows():
        s = (data.meta[r["run"]].get("summary") or {})
        if "n" in s and s["n"] != r["n"]:
            problems.append(f"{r['run']}: sidecar summary n={s['n']}, CSV has {r['n']} ok+late rows")
        for o, k in (s.get("outcomes") or {}).items():
            if o in r and k != r[o]:
                problems.append(f"{r['run']}: sidecar says {k} {o}, CSV has {r[o]}")
        if s.get("mean_us") is not None and r["n"] and not math.isclose(s["mean_us"], r["mean_us"], rel_tol=1e-6, abs_tol=1e-6):
            problems.append(f"{r['run']}: sidecar mean {s['mean_us']} us, CSV gives {r['mean_us']} us")
    return problems


def md_table(headers: list[str], rows: Iterable[Iterable]) -> str:
    def cell(x):
        return _fmt(x).replace("|", "\\|")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


def html_table(headers: list[str], rows: Iterable[Iterable]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(x))}</td>" for x in r) + "</tr>" for r in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody>\n</table>"


RUN_HEADERS = ["run", "mode", "distance", "load", "valid", "events", "ok", "late", "early", "missed", "lost", "n",
               "mean_us", "var_ms2", "std_us", "min_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us",
               "mean_ticks", "p99_ticks", "jitter_mean_us", "jitter_max_us"]


BUDGET_HEADERS = ["run", "target", "valid", "n", "p50_us", "floor_us", "est_error_p50", "wakeup_p50", "line_p50",
                  "est_error_p99", "wakeup_p99", "line_p99", "largest_at_p50"]


def budget_rows(data: RunSet) -> list[list[Any]]:
    """Normal-mode runs' latency budgets (sidecar `budget`, docs/normal-mode.md): one row per run."""
    rows = []
    for r in data.runs:
        meta = data.meta[r]
        b = meta.get("budget")
        if not isinstance(b, dict):
            continue
        parts = b.get("parts", {})

        def q(col: str, k: str) -> Any:
            return (parts.get(col) or {}).get(k)
        fl = b.get("floor") or {}
        rows.append([r, b.get("target"), meta.get("valid"), b.get("n"), (meta.get("summary") or {}).get("p50_us"),
                     fl.get("us") if fl.get("us") is not None else f"unknown ({fl.get('why')})",
                     q("est_error_us", "p50"), q("wakeup_us", "p50"), q("line_us", "p50"),
                     q("est_error_us", "p99"), q("wakeup_us", "p99"), q("line_us", "p99"), b.get("largest_p50")])
    return rows


BUDGET_WORDS = ("Each normal-mode latency split into the parts the rig can measure (they add up to it): the error "
                "of the PC's tick-start estimate against the profiler's own stamps, the firing thread's wake-up "
                "lateness, the line (write to stamp, beyond the fastest FIRE around it) and the profiler's floor "
                "(a FIRE injected on the tick's edge). 'naive' fires by TIMECODE arrivals, as the paper did; "
                "'disciplined' by the clock servo. docs/normal-mode.md says how each part is measured.")


def campaign_figures(data: RunSet, out: Path) -> dict[str, list[Path]]:
    """The on-time share against distance of each `mmrig sweep` campaign the runs come from (a point's sidecar
    names its campaign; the campaign's sidecar is two folders up from the point's CSV: FOLDER/points/P.csv)."""
    folders: dict[str, Path] = {}
    for m in data.meta.values():
        c, csv = m.get("campaign"), m.get("_csv")
        if isinstance(c, dict) and csv and (Path(csv).parent.parent / "campaign.json").is_file():
            folders.setdefault(str(c.get("name")), Path(csv).parent.parent)
    figs = {}
    for name, folder in sorted(folders.items()):
        stem = "on-time-" + re.sub(r"[^A-Za-z0-9._-]", "_", name)[:64]
        figs[f"on-time share against distance, campaign {name}"] = plots.save(sweepplots.on_time(folder), out, stem)
    return figs


def report(runs: RunSet | str | Path | Iterable[str | Path], out_dir: str | Path, title: str = "mmrig latency report",
           figures: bool = True) -> dict[str, Path]:
    """Writes OUT_DIR/report.md, report.html, summary.csv, comparison.csv and figures/*.png|svg."""
    data = runs if isinstance(runs, RunSet) else read_runs(runs)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    per_run = summarize(data, by="run")
    per_group = summarize(data, by="group")
    comp = comparison(data)
    write_frame(per_run, out / "summary.csv", index=False)  # csvsafe: no spreadsheet formulas in text cells
    write_frame(per_group, out / "summary-groups.csv", index=False)
    write_frame(comp, out / "comparison.csv", index=False)
    valid = data.valid_runs()
    invalid = [(r, data.meta[r].get("invalid_reason")) for r in data.runs if r not in valid]
    kinds = sorted({str((data.meta[r].get("target") or {}).get("kind")) for r in data.runs})
    synthetic = "synthetic" in kinds
    figs = plots.all_figures(data, out / "figures", valid) if figures and valid else {}
    if figures:
        figs.update(campaign_figures(data, out / "figures"))
    problems = consistency(data, per_run)

    run_rows = [[r.get(h) for h in RUN_HEADERS] for _, r in per_run.iterrows()]
    comp_rows = [[r[h] for h in COMPARE_HEADERS] for _, r in comp.iterrows()]
    paper_rows = [[p.section, p.experiment, p.note] for p in PAPER]
    warn = ("**SYNTHETIC DATA** (mmanalysis.synth): these numbers come from a model, not from a measurement."
            if synthetic else "")
    intro = (f"Runs: {len(data.runs)} ({len(valid)} valid), targets: {', '.join(kinds)}. Latency statistics are over "
             "ok + late events only; early, missed and lost events are counted, never folded in. Variance is the "
             "sample variance; the paper's variances are in ms^2. Verdict: 'beats the paper' when both our mean and our "
             "variance are below the paper's; the 1-tick-ahead row compares our share of ok events with the paper's "
             "'about half under 1 ms'. Early, missed and lost events are listed with every verdict.")

    md = [f"# {title}", ""]
    if warn:
        md += [warn, ""]
    md += [intro, "", "## Against the paper (section 7)", "",
           md_table(COMPARE_HEADERS, comp_rows), "", "What the paper reports:", "",
           md_table(["section", "experiment", "paper"], paper_rows), "", "## Every run", "",
           md_table(RUN_HEADERS, run_rows), ""]
    budgets = budget_rows(data)
    if budgets:
        md += ["## Normal mode: the latency budget (us)", "", BUDGET_WORDS, "", md_table(BUDGET_HEADERS, budgets), ""]
    md += [x + "\n" for x in profilereport.section(data.meta, md_table, lambda t, k: "#" * k + " " + t, lambda t: t)]
    if invalid:
        md += ["## Invalid runs (kept, never reported as results)", ""]
        md += [f"- {r}: {why or 'no reason given'}" for r, why in invalid] + [""]
    if problems:
        md += ["## Sidecar summary disagrees with the CSV", ""] + [f"- {p}" for p in problems] + [""]
    if figs:
        md += ["## Figures", ""]
        md += [f"![{name}](figures/{paths[0].name})" for name, paths in figs.items()] + [""]
    (out / "report.md").write_text("\n".join(md))

    h = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{html.escape(title)}</title>",
         "<style>body{font-family:sans-serif;max-width:1400px;margin:auto}table{border-collapse:collapse;"
         "font-size:12px}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}"
         ".warn{background:#fdd;padding:6px}img{max-width:100%}</style></head><body>",
         f"<h1>{html.escape(title)}</h1>"]
    if warn:
        h.append(f"<p class='warn'><b>SYNTHETIC DATA</b> (mmanalysis.synth): these numbers come from a model, "
                 "not from a measurement.</p>")
    h += [f"<p>{html.escape(intro)}</p>", "<h2>Against the paper (section 7)</h2>",
          html_table(COMPARE_HEADERS, comp_rows), "<p>What the paper reports:</p>",
          html_table(["section", "experiment", "paper"], paper_rows), "<h2>Every run</h2>",
          html_table(RUN_HEADERS, run_rows)]
    if budgets:
        h += ["<h2>Normal mode: the latency budget (us)</h2>", f"<p>{html.escape(BUDGET_WORDS)}</p>",
              html_table(BUDGET_HEADERS, budgets)]
    h += profilereport.section(data.meta, html_table, lambda t, k: f"<h{k}>{html.escape(t)}</h{k}>",
                               lambda t: f"<p>{html.escape(t)}</p>")
    if invalid:
        h += ["<h2>Invalid runs (kept, never reported as results)</h2><ul>"]
        h += [f"<li>{html.escape(r)}: {html.escape(str(why or 'no reason given'))}</li>" for r, why in invalid] + ["</ul>"]
    if problems:
        h += ["<h2>Sidecar summary disagrees with the CSV</h2><ul>"]
        h += [f"<li>{html.escape(p)}</li>" for p in problems] + ["</ul>"]
    if figs:
        h += ["<h2>Figures</h2>"]
        h += [f"<figure><img src='figures/{html.escape(paths[1].name)}' alt='{html.escape(name)}'>"
              f"<figcaption>{html.escape(name)}</figcaption></figure>" for name, paths in figs.items()]
    h.append("</body></html>")
    (out / "report.html").write_text("\n".join(h))
    return {"md": out / "report.md", "html": out / "report.html", "summary": out / "summary.csv",
            "comparison": out / "comparison.csv", "figures": out / "figures"}

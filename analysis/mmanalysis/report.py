"""Comparison report: Markdown + HTML, a table against the paper's section 7, the figures.

The paper's rows, its figures (in us and us²) and the verdict words come from mmanalysis.paper, which the
demo's table uses too. Variances are in us² throughout (mmanalysis.variance_text); the paper's ms² are
converted. Figures and headline tables show the valid runs that are not set-aside attempts
(mmanalysis.selection); the others are listed apart with their reasons, and `include_all` brings them in.

Runs are grouped by the profiler that stamped them (mmanalysis.profiler_kind: "avr", input capture, or "8051",
the paper's 87C51 image polling its event input; a sidecar without the key is "avr"): the comparison never pools
the two kinds (its `profiler` column says which), the run table has a profiler_kind column, and figures that
show both kinds label each run with its kind.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from . import explainreport, phasetable, plots, profhistreport, profilereport, sweepplots
from .csvsafe import write_frame
from .latstats import variance_text
from .paper import PAPER, PaperRow, observed_from_row, verdict  # noqa: F401  (PAPER, PaperRow: the report's API)
from .paper import DESIGN_WORDS, LATENCY_ROWS, PAPER_DESIGN, design
from .propagation import link_stats
from .reader import PROFILER_KINDS, RunSet, profiler_kind, read_runs
from .safefiles import atomic_write, output_folder, refuse_early
from .schema import load_condition
from .selection import run_kind, select, subset
from .stats import summarize

COMPARE_HEADERS = ["section", "experiment", "profiler", "paper mean (us)", "paper var (us²)", "runs", "events", "n (ok+late)",
                   "mean (us)", "var (us²)", "std (us)", "p99 (us)", "max (us)", "jitter max (us)", "ok / events",
                   "early", "missed", "lost", "verdict"]


def _fmt(x, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float):
        if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e7):
            return f"{x:.{digits}g}"
        return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:,.{max(digits - len(str(int(abs(x)))), 1)}f}".rstrip("0").rstrip(".")
    return str(x)


def _cell(header: str, x: Any) -> str:
    """A table cell: variances as variance_text (us², 4 significant digits, grouped), the rest by _fmt."""
    if ("var" in header and "us" in header) and isinstance(x, (int, float)) and not isinstance(x, bool):
        return variance_text(float(x))
    return _fmt(x)


def comparison(data: RunSet) -> pd.DataFrame:
    """The table against the paper: one row per section 7 experiment, our valid runs that match it pooled.

    When the matching runs differ in event generation (aligned / free), each generation gets its own row:
    pooling them would mix two different experiments. So does each executor design in the rows whose figure
    is the executor's latency (mmanalysis.paper.design: task dispatch, the paper's, first; ISR dispatch, ours,
    its own row with "ours, not compared"). Runs of different profiler kinds (avr, 8051) get rows of
    their own too, the `profiler` column saying which: the 8051's polled stamps add tens of us to every latency."""
    valid = set(select(data).shown)   # never an invalid run or a set-aside attempt
    rows = []
    for p in PAPER:
        matched = [r for r in data.runs if p.match(data.meta[r].get("config", {}))]
        runs = [r for r in matched if r in valid]
        invalid = [r for r in matched if r not in valid]
        gens = sorted({str(data.meta[r]["config"].get("generation")) for r in runs})
        groups: dict[tuple[str, str | None, str | None, bool], list[str]] = {}
        for r in runs:
            gen = str(data.meta[r]["config"].get("generation")) if len(gens) > 1 else None
            # the executor's design decides whether a latency row compares with the paper's: never pooled
            des = design(data.meta[r].get("config", {})) if p.key in LATENCY_ROWS else None
            # normal mode fired by the clock servo (ours, exp2b) is not the paper's naive PC: never pooled either
            servo = p.key == "normal" and bool(data.meta[r].get("config", {}).get("discipline"))
            groups.setdefault((profiler_kind(data.meta[r]), gen, des, servo), []).append(r)
        split = [(k, g, d, sv, groups[k, g, d, sv]) for k, g, d, sv in
                 sorted(groups, key=lambda x: (_kind_order(x[0]), x[3], x[1] or "", x[2] != PAPER_DESIGN))]
        split = split or [(None, None, None, False, [])]
        for kind, gen, des, servo, group in split:
            s = None
            if group:
                sub = RunSet(data.df[data.df["run"].isin(group)].assign(_all="all"), {r: data.meta[r] for r in group})
                res = summarize(sub, by="_all", valid_only=False)
                s = res.iloc[0] if len(res) else None
            get = (lambda k: s[k]) if s is not None else (lambda k: None)
            bench = all((data.meta[r].get("target") or {}).get("kind") == "bench" for r in group)
            v = verdict(p, observed_from_row(s, gen or _only_generation(data, group), bench, des) if s is not None else None)
            if servo and s is not None:
                v = f"{SERVO_WORDS}; mean {s['mean_us']:.1f} us, p99 {s['p99_us']:.1f} us, on time " \
                    f"{100 * s['ok_share']:.1f} %"
            if s is None and group:
                v = "no events in these runs"
            elif s is None and invalid:
                v = f"no valid run ({len(invalid)} invalid: {', '.join(invalid)})"
            rows.append({
                "section": p.section, "experiment": p.experiment + (f" (generation {gen})" if gen else "")
                + (f" ({DESIGN_WORDS[des]})" if des and des != PAPER_DESIGN else "")    # the paper's: its own name
                + (" (disciplined: the clock servo, ours)" if servo else ""),
                "profiler": kind or "-",
                "paper mean (us)": p.mean_us, "paper var (us²)": p.var_us2,
                "runs": ", ".join(group) or "-", "events": get("events"), "n (ok+late)": get("n"),
                "mean (us)": get("mean_us"), "var (us²)": get("var_us2"),
                "std (us)": get("std_us"), "p99 (us)": get("p99_us"), "max (us)": get("max_us"),
                "jitter max (us)": get("jitter_max_us"), "ok / events": get("ok_share"), "early": get("early"),
                "missed": get("missed"), "lost": get("lost"), "verdict": v, "paper says": p.note,
            })
    return pd.DataFrame(rows)


SERVO_WORDS = ("ours, not compared: the clock servo aims each FIRE at its tick (docs/normal-mode.md), which the "
               "paper's naive PC did not; its row shows what the servo changes beside the naive one")


def _kind_order(kind: str) -> tuple[int, str]:
    return (PROFILER_KINDS.index(kind) if kind in PROFILER_KINDS else len(PROFILER_KINDS), kind)


def _only_generation(data: RunSet, runs: list[str]) -> str | None:
    gens = {data.meta[r].get("config", {}).get("generation") for r in runs}
    return gens.pop() if len(gens) == 1 else None


LOAD_HEADERS = ["run", "load", "events", "n", "mean (us)", "var (us²)", "SCHEDULE propagation mean (ms)",
                "propagation p99 (ms)", "propagation max (ms)", "slack min (ticks)", "missed"]

LOAD_WORDS = ("What the PC's load can change in mixed mode. The latency is measured by the executor's timer; on "
              "the virtual bench the clock is exact and the executor's spread is its own load's (an idle executor: one "
              "constant dispatch time), whatever the PC does: a load effect on the mean can only be chance there. "
              "The PC's load shows in how long each SCHEDULE frame took from its creation to the executor's ACK (the "
              "propagation delay), in the slack the event had left on arrival, and, once the slack runs out, in "
              "missed events.")


def load_rows(data: RunSet, runs: list[str]) -> list[list[Any]]:
    """Mixed runs of RUNS: latency beside the SCHEDULE link's propagation delay, slack and missed events."""
    per_run = summarize(subset(data, runs), by="run").set_index("run") if runs else None
    rows = []
    for r in runs:
        if data.meta[r].get("config", {}).get("mode") != "mixed":
            continue
        ls = link_stats(data.df[data.df["run"] == r], data.meta[r])
        s = per_run.loc[r]
        rows.append([r, load_condition(data.meta[r]["config"].get("load")), ls.events, s["n"], s["mean_us"],
                     s["var_us2"], ls.prop_mean_ms, ls.prop_p99_ms, ls.prop_max_ms, ls.slack_min_ticks, ls.missed])
    return rows


def consistency(data: RunSet, per_run: pd.DataFrame) -> list[str]:
    """Where a sidecar's own summary disagrees with what we recompute from its CSV. A run measured by the
    profiler's histogram alone (`--no-raw`: profhistreport.counted_runs) has no event rows by design and its
    summary is the histogram's: nothing in its CSV to recompute, so nothing to disagree with."""
    counted = profhistreport.counted_runs(data.meta)
    problems = []
    for _, r in per_run.iterrows():
        if r["run"] in counted:
            continue
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
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(h, x).replace("|", "\\|") for h, x in zip(headers, r)) + " |" for r in rows]
    return "\n".join(lines)


def md_text(text: str) -> str:
    """TEXT as Markdown prose shows it: the characters Markdown would read as emphasis or code escaped."""
    return "".join("\\" + c if c in "\\`*_[]<>|" else c for c in text)


def shorten(text: str, n: int) -> str:
    """TEXT cut to N characters (the last one an ellipsis) when longer."""
    text = str(text)
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _html_cell(text: str, limit: int | None) -> str:
    """A cell; one longer than LIMIT is cut, its full text in the cell's title (a tooltip)."""
    if limit is not None and len(text) > limit:
        return f"<td title='{html.escape(text, quote=True)}'>{html.escape(shorten(text, limit))}</td>"
    return f"<td>{html.escape(text)}</td>"


def html_table(headers: list[str], rows: Iterable[Iterable], labels: dict[str, str] | None = None,
               cap: dict[str, int] | None = None) -> str:
    """A table in a box of the page's width that scrolls sideways if it ever must (PAGE_CSS); LABELS: a
    shorter heading for a column (the cells are still formatted by the full header's name); CAP: a column's
    most characters (a longer cell is cut, its full text in the cell's title)."""
    labels, cap = labels or {}, cap or {}
    head = "".join(f"<th>{html.escape(labels.get(h, h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_html_cell(_cell(h, x), cap.get(h)) for h, x in zip(headers, r)) + "</tr>"
                   for r in rows)
    return f"<div class='wide'><table>\n<thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody>\n</table></div>"


PAGE_WIDTH_PX = 1240     # fits a 1280 px screen with its scroll bar
# Tables never widen the page: each sits in a box of the page's width (.wide) that scrolls sideways when a
# table cannot wrap to fit; headings and long cells (run names, verdicts) wrap, numbers do not.
PAGE_CSS = (f"body{{font-family:sans-serif;max-width:{PAGE_WIDTH_PX}px;margin:auto;padding:0 8px}}"
            ".wide{max-width:100%;overflow-x:auto}table{border-collapse:collapse;font-size:12px}"
            "td,th{border:1px solid #bbb;padding:2px 4px;text-align:right;overflow-wrap:anywhere}"
            "th{font-weight:600;vertical-align:bottom}td:first-child{text-align:left;max-width:16em}"
            ".warn{background:#fdd;padding:6px}figure{margin:1em 0}img{max-width:100%}"
            "figcaption{font-size:13px;color:#333;max-width:60em}")


def html_page(title: str, body: list[str]) -> str:
    """A whole HTML page around BODY's lines: the report's style (tables, the synthetic warning, figures)."""
    return "\n".join(["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
                      "<meta name='viewport' content='width=device-width'>", f"<title>{html.escape(title)}</title>",
                      f"<style>{PAGE_CSS}</style></head><body>", *body, "</body></html>"])


RUN_HEADERS = ["run", "mode", "distance", "load", "profiler_kind", "valid", "events", "ok", "late", "early", "missed", "lost", "n",
               "mean_us", "var_us2", "std_us", "min_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us",
               "mean_ticks", "p99_ticks", "jitter_mean_us", "jitter_max_us"]


# The HTML's run table: what a reader compares, under short headings (every column is in summary.csv). The
# outcome counts share one cell, and the tick and mean-jitter columns are left to the CSV, so the table is
# about 1,000 px wide at 12 px (test_report_figures checks the estimate).
RUN_HTML_HEADERS = ["run", "mode", "distance", "load", "profiler_kind", "valid", "events", "outcomes", "n",
                    "mean_us", "var_us2", "std_us", "min_us", "p50_us", "p99_us", "p999_us", "max_us", "jitter_max_us"]
RUN_HTML_LABELS = {"distance": "ahead", "profiler_kind": "profiler", "outcomes": "ok / late / early / missed / lost",
                   "mean_us": "mean (us)", "var_us2": "var (us²)", "std_us": "std", "min_us": "min", "p50_us": "p50",
                   "p99_us": "p99", "p999_us": "p99.9", "max_us": "max", "jitter_max_us": "jitter max"}


def run_html_row(r: pd.Series) -> list[Any]:
    outcomes = " / ".join(str(int(r.get(o) or 0)) for o in ("ok", "late", "early", "missed", "lost"))
    return [outcomes if h == "outcomes" else r.get(h) for h in RUN_HTML_HEADERS]


BUDGET_HEADERS = ["run", "target", "valid", "n", "p50_us", "floor_us", "est_error_p50", "wakeup_p50", "write_p50",
                  "line_p50", "est_error_p99", "wakeup_p99", "write_p99", "line_p99", "largest_at_p50"]


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
                     q("est_error_us", "p50"), q("wakeup_us", "p50"), q("write_us", "p50"), q("line_us", "p50"),
                     q("est_error_us", "p99"), q("wakeup_us", "p99"), q("write_us", "p99"), q("line_us", "p99"),
                     b.get("largest_p50")])
    return rows


BUDGET_WORDS = ("Each normal-mode latency split into the parts the rig can measure (they add up to it): the error "
                "of the PC's tick-start estimate against the profiler's own stamps, the firing thread's wake-up "
                "lateness, the write call itself, the line (the write's return to the stamp, beyond the fastest "
                "FIRE around it; empty write: a run before format 5, its line holds the write) and the profiler's floor "
                "(a FIRE injected on the tick's edge). 'naive' fires by TIMECODE arrivals, as the paper did; "
                "'disciplined' by the clock servo. docs/normal-mode.md says how each part is measured.")


NOT_READ = "Runs not read (the reader refused them: each file and why)"


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
        stem = plots.figure_stem(plots.ON_TIME_PREFIX, name[:64])
        figs[stem] = plots.save(sweepplots.on_time(folder), out, stem)
    return figs


def gantt_figures(data: RunSet, runs: list[str], out: Path) -> dict[str, list[Path]]:
    """The executor's Gantt chart (mmanalysis.ganttplot) of each of RUNS that was traced and whose trace is
    beside its CSV; a trace that cannot be read gets none (the profile section says why, where it can)."""
    from . import exectrace, ganttplot

    figs = {}
    for run in runs:
        path = ganttplot.trace_path(data.meta[run])
        if path is None:
            continue
        try:
            tr = exectrace.read(path)
        except (exectrace.ExecTraceError, OSError):
            continue
        stem = plots.figure_stem(plots.GANTT_PREFIX, run)
        figs[stem] = plots.save(ganttplot.gantt(tr, run), out, stem)
    return figs


def intro_text(data: RunSet, shown: list[str], left_out: list[tuple[str, str]]) -> str:
    """The report's opening paragraph (the Markdown's and the HTML's alike): the runs read, valid, shown and
    LEFT_OUT, the targets and profilers they come from, and what the statistics are over."""
    valid = data.valid_runs()
    kinds = sorted({str((data.meta[r].get("target") or {}).get("kind")) for r in data.runs})
    profilers = sorted({profiler_kind(data.meta[r]) for r in data.runs}, key=_kind_order)
    return (f"Runs read: {len(data.runs)} ({len(valid)} valid); shown in figures and the run table: {len(shown)}"
            + (f", left out: {len(left_out)} (invalid or set-aside attempts, listed below; `--all` shows them)"
               if left_out else "") + f"; targets: {', '.join(kinds)}; profilers: {', '.join(profilers)}"
            + (" (grouped apart: the 8051 polls its event input, the AVR stamps it by input capture)"
               if len(profilers) > 1 else "") + ". "
            "Latency statistics (n, mean, variance, percentiles) are over the measured events: ok and late, and "
            "measurable (mmanalysis.latstats.measured); early, missed and lost events are counted, never folded "
            "in. Variance is the sample variance in us² (the paper's ms² x 1,000,000). The comparison pools our "
            "valid runs of each experiment; its verdicts (mmanalysis.paper) say what the runs show against the "
            "paper, and name every early, missed and lost event.")


def write_tables(out: Path, tables: dict[str, pd.DataFrame]) -> None:
    """OUT/NAME.csv of each table that has rows, and of summary, summary-groups and comparison always (csvsafe: no
    spreadsheet formulas in text cells)."""
    for name, frame in tables.items():
        if len(frame) or name in ("summary", "summary-groups", "comparison"):
            write_frame(frame, out / f"{name}.csv", index=False)


def report_figures(data: RunSet, shown: list[str], folder: Path, bin_us: float | None,
                   hist_max_us: float | None) -> dict[str, list[Path]]:
    """The report's figures in FOLDER, by name: the SHOWN runs' (plots.all_figures), their Gantt charts and the
    campaigns'."""
    figs = (plots.all_figures(subset(data, shown), folder, plots._runs(data, shown), bin_us=bin_us, max_us=hist_max_us)
            if shown else {})
    figs.update(gantt_figures(data, plots._runs(data, shown), folder))
    figs.update(campaign_figures(data, folder))
    return figs


def report(runs: RunSet | str | Path | Iterable[str | Path], out_dir: str | Path, title: str = "mmrig latency report",
           figures: bool = True, include_all: bool = False, not_read: Iterable[str] = (),
           bin_us: float | None = None, hist_max_us: float | None = None, host_trace: bool = True) -> dict[str, Path]:
    """Writes OUT_DIR/report.md, report.html, summary.csv (every run, with its `valid` column), comparison.csv,
    phases.csv (runs in phases only: a row per phase and the whole, phasetable.py) and figures/*.png|svg. Figures and the run table show the valid runs that are not set-aside attempts; the
    others are listed apart with their reasons (INCLUDE_ALL: shown too, marked). The comparison with the paper
    only ever pools valid runs. NOT_READ: the runs the reader refused (reader.read_each), one line each.
    BIN_US, HIST_MAX_US: the histogram's bin width and range (plots.histogram). Each figure's caption is
    plots.caption(name), in the Markdown and the HTML alike. HOST_TRACE: the worst events' wake-ups split by their
    runs' host traces (explainreport.py; each trace read once, seconds a run), else the budget's parts alone."""
    not_read = list(not_read)
    data = runs if isinstance(runs, RunSet) else read_runs(runs)
    out = output_folder(out_dir)      # made if missing (its parent must exist), never through a planted link
    refuse_early([out / "report.md", out / "report.html"])     # written last: refused before the figures
    per_run = summarize(data, by="run")
    per_group = summarize(data, by="group")
    comp = comparison(data)
    sel = select(data, include_all)
    counted = profhistreport.counted_runs(data.meta)     # no event rows: their own table only
    shown = [r for r in sel.shown if r not in counted]
    phases = phase_tables(data, sel.shown)                # runs in phases: a row per phase and the whole
    write_tables(out, {"summary": per_run, "summary-groups": per_group, "comparison": comp, "phases": phases.frame})
    # brought in by include_all (a run on the profiler's histogram alone too: its own table, its figures)
    marked = [(r, why) for r, why in select(data).left_out if r in sel.shown]
    synthetic = any(run_kind(data.meta[r]).startswith("synthetic") for r in data.runs)
    figs = report_figures(data, shown, out / "figures", bin_us, hist_max_us) if figures else {}
    if figures:      # runs on the profiler's histogram alone: their worst case over time from its reports
        figs.update(plots.counted_figures(data, out / "figures", [r for r in sel.shown if r in counted]))
    problems = consistency(data, per_run) + phasetable.problems(data, phases.frame)

    run_rows = [[r.get(h) for h in RUN_HEADERS] for _, r in per_run.iterrows() if r["run"] in shown]
    run_html = [run_html_row(r) for _, r in per_run.iterrows() if r["run"] in shown]
    comp_rows = [[r[h] for h in COMPARE_HEADERS] for _, r in comp.iterrows()]
    paper_rows = [[p.section, p.experiment, p.says] for p in PAPER]
    shown_runs = plots._runs(data, shown) if shown else []   # (_runs of none is all: none shown, none listed)
    loads = load_rows(data, shown_runs)
    worst = explainreport.worst_events(data, shown_runs, use_trace=host_trace)
    warn = ("**SYNTHETIC DATA** (mmanalysis.synth): these numbers come from a model, not from a measurement."
            if synthetic else "")
    intro = intro_text(data, shown, sel.left_out)

    left_out_md = [f"- {r}: {why}" for r, why in sel.left_out]
    marked_md = [f"- {r}: {why}" for r, why in marked]
    md = [f"# {title}", ""]
    if warn:
        md += [warn, ""]
    md += [intro, "", "## Against the paper (section 7)", "",
           md_table(COMPARE_HEADERS, comp_rows), "", "What the paper reports:", "",
           md_table(["section", "experiment", "paper"], paper_rows), "", "## Runs shown", "",
           md_table(RUN_HEADERS, run_rows), ""]
    if marked:
        md += ["Shown although invalid or set aside (`--all`): never a result.", ""] + marked_md + [""]
    md += phasetable.section(phases, md_table, lambda t: f"## {t}\n", lambda t: t + "\n")
    if loads:
        md += ["## Mixed mode: what the PC's load can change", "", LOAD_WORDS, "", md_table(LOAD_HEADERS, loads), ""]
    budgets = budget_rows(subset(data, shown))
    if budgets:
        md += ["## Normal mode: the latency budget (us)", "", BUDGET_WORDS, "", md_table(BUDGET_HEADERS, budgets), ""]
    md += [x + "\n" for x in explainreport.section(worst, lambda t, k: "#" * k + " " + t, lambda t: t,
                                                   lambda items: "\n".join(f"- {md_text(i)}" for i in items))]
    hists = profhistreport.rows(data.meta, [r for r in data.runs if r in sel.shown])
    if hists:
        md += ["## The profiler's own histograms", "", profhistreport.WORDS, "",
               md_table(profhistreport.HEADERS, hists), ""]
    md += [x + "\n" for x in profilereport.section(data.meta, md_table, lambda t, k: "#" * k + " " + t, lambda t: t)]
    if sel.left_out:
        md += ["## Runs left out (kept on disk, never reported as results)", ""] + left_out_md + [""]
    if not_read:
        md += [f"## {NOT_READ}", ""] + [f"- {p}" for p in not_read] + [""]
    if problems:
        md += ["## Sidecar summary disagrees with the CSV", ""] + [f"- {p}" for p in problems] + [""]
    if figs:
        md += ["## Figures", ""]
        for name, paths in figs.items():
            md += [f"![{plots.caption(name)}](figures/{paths[0].name})", "", f"*{plots.caption(name)}*", ""]
    atomic_write(out / "report.md", "\n".join(md).encode())

    def ul(items: list[tuple[str, str]]) -> list[str]:
        return ["<ul>"] + [f"<li>{html.escape(r)}: {html.escape(why)}</li>" for r, why in items] + ["</ul>"]
    h = [f"<h1>{html.escape(title)}</h1>"]
    if warn:
        h.append("<p class='warn'><b>SYNTHETIC DATA</b> (mmanalysis.synth): these numbers come from a model, "
                 "not from a measurement.</p>")
    h += [f"<p>{html.escape(intro)}</p>", "<h2>Against the paper (section 7)</h2>",
          html_table(COMPARE_HEADERS, comp_rows), "<p>What the paper reports:</p>",
          html_table(["section", "experiment", "paper"], paper_rows), "<h2>Runs shown</h2>",
          html_table(RUN_HTML_HEADERS, run_html, RUN_HTML_LABELS),
          "<p>Latencies in us; every column, ticks and mean jitter too, is in summary.csv.</p>"]
    if marked:
        h += ["<p>Shown although invalid or set aside (--all): never a result.</p>"] + ul(marked)
    h += phasetable.section(phases, html_table, lambda t: f"<h2>{html.escape(t)}</h2>",
                            lambda t: f"<p>{html.escape(t)}</p>")
    if loads:
        h += ["<h2>Mixed mode: what the PC's load can change</h2>", f"<p>{html.escape(LOAD_WORDS)}</p>",
              html_table(LOAD_HEADERS, loads)]
    if budgets:
        h += ["<h2>Normal mode: the latency budget (us)</h2>", f"<p>{html.escape(BUDGET_WORDS)}</p>",
              html_table(BUDGET_HEADERS, budgets)]
    h += explainreport.section(worst, lambda t, k: f"<h{k}>{html.escape(t)}</h{k}>", lambda t: f"<p>{html.escape(t)}</p>",
                               lambda items: "<ul class='explained'>" + "".join(f"<li>{html.escape(i)}</li>"
                                                                                for i in items) + "</ul>")
    if hists:
        h += ["<h2>The profiler's own histograms</h2>", f"<p>{html.escape(profhistreport.WORDS)}</p>",
              html_table(profhistreport.HEADERS, hists)]
    h += profilereport.section(data.meta, html_table, lambda t, k: f"<h{k}>{html.escape(t)}</h{k}>",
                               lambda t: f"<p>{html.escape(t)}</p>")
    if sel.left_out:
        h += ["<h2>Runs left out (kept on disk, never reported as results)</h2>"] + ul(sel.left_out)
    if not_read:
        h += [f"<h2>{NOT_READ}</h2><ul>"] + [f"<li>{html.escape(p)}</li>" for p in not_read] + ["</ul>"]
    if problems:
        h += ["<h2>Sidecar summary disagrees with the CSV</h2><ul>"]
        h += [f"<li>{html.escape(p)}</li>" for p in problems] + ["</ul>"]
    if figs:
        h += ["<h2>Figures</h2>"]
        h += [f"<figure><img src='figures/{html.escape(paths[-1].name)}' alt='{html.escape(plots.caption(name))}'>"
              f"<figcaption>{html.escape(plots.caption(name))}</figcaption></figure>" for name, paths in figs.items()]
    atomic_write(out / "report.html", html_page(title, h).encode())
    return {"md": out / "report.md", "html": out / "report.html", "summary": out / "summary.csv",
            "comparison": out / "comparison.csv", "figures": out / "figures"}


def phase_tables(data: RunSet, shown: list[str]) -> phasetable.PhaseTables:
    """The SHOWN runs in phases: those with event rows from their rows, those measured by the profiler's histogram
    alone from their sidecar (profhistreport.counted_runs)."""
    counted = profhistreport.counted_runs(data.meta)
    return phasetable.tables(data, [r for r in shown if r not in counted], [r for r in shown if r in counted])


def headline(data: RunSet, comparison_table: pd.DataFrame, include_all: bool = False) -> list[str]:
    """A few lines for a terminal: runs read, shown and left out, and each comparison row's verdict."""
    sel = select(data, include_all)
    valid = data.valid_runs()
    lines = [f"runs read: {len(data.runs)} ({len(valid)} valid, {len(data.runs) - len(valid)} invalid); "
             f"shown: {len(sel.shown)}" + (f"; left out: {len(sel.left_out)} (invalid or set-aside attempts, "
                                            "listed with their reasons in the report; --all shows them)"
                                            if sel.left_out else "")]
    lines += phasetable.headline(phase_tables(data, sel.shown))
    lines.append("against the paper (section 7):")
    several = len(set(comparison_table.get("profiler", pd.Series(dtype=object))) - {"-"}) > 1   # "-": no runs
    for _, r in comparison_table.iterrows():
        kind = f" [profiler {r['profiler']}]" if several and r["profiler"] != "-" else ""
        lines.append(f"  {r['section']} {r['experiment']}{kind}: {r['verdict']}")
    return lines

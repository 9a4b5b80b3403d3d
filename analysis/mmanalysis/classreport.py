"""Class overview: `mmrig report CLASS --out OUT` on a folder of hand-ins, one subfolder per group.

A class folder (is_class_folder) is a directory that holds no run of its own, no `results/` folder and no
`campaign.json` (those are a group's or a student's folder, or a sweep campaign: the normal report), and at
least one subfolder with runs. Each subfolder is a group; its runs (group_runs) are those in GROUP/results/ (and
folders under it, as `mmrig report results/` reads them) when that folder exists, else the runs directly in
GROUP/ (not its other subfolders: a student's practice/, smoke/ or report/ folder is not a hand-in).

The report has, per experiment of the paper's section 7 (matched by the run's config through mmanalysis.paper,
never by file name), a table with one row per group (the group's valid runs of that experiment pooled, its
figures, the paper's verdict, and flags: invalid with the reason, set-aside attempt, synthetic, bench / boards)
and one CDF figure with one line per group (plots.cdf, so the same axes, labels and reference lines as the normal
report). Invalid runs and set-aside attempts are flagged in the tables and left out of the figures unless
`include_all`; a group whose runs all are left out gets their figures in its row, marked "not a result".
A group folder without a readable run, or a run file the reader refuses, is one line under "Problems".
"""

from __future__ import annotations

import hashlib
import html
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from . import canvas
from . import plots
from .csvsafe import write_frame
from .paper import PAPER, PaperRow, design, observed_from_row, verdict
from .runvariant import PAPER_VARIANT, variant_label
from .runvariant import variant as variant_of
from .reader import RunSet, find_runs, iter_runs, kind_label, profiler_kind, read_each, read_run, read_sidecar, \
    typed_runset
from .classfigure import band, summary_figure
from .classhandin import ClassRuns, Group, Row
from .classgrading import GRADING_HEADERS, grade
from .classsummary import LINE_HEADERS, GroupLine, group_line, identical_handins, kinds_table, missing_runs, \
    short_runs
from .labkeyfiles import KEY_FOLDER
from .safefiles import atomic_write, output_folder
from .report import _cell, html_page, html_table, md_table, shorten
from .schema import SchemaError, load_condition
from .selection import is_set_aside, run_kind
from .stats import summarize

TABLE_HEADERS = ["group", "runs", "events", "n (ok+late)", "mean (us)", "var (us²)", "max (us)", "ok / events",
                 "bench sched", "verdict", "flags"]
FLAG_CHARS = 80         # a flags cell longer than this is cut; its full text in the HTML cell's title, and in a
                        # numbered note under the Markdown table
LAB_HTML = "lab.html"         # the executed notebook, exported (docs/lab.md, "What to hand in", item 2)
TARGET_FLAGS = {"bench": "bench", "boards": "boards", "synthetic": "SYNTHETIC"}


def group_folder(sub: Path) -> Path:
    """Where a group's runs are: GROUP/results/ if it exists, else GROUP/ itself."""
    res = sub / "results"
    return res if res.is_dir() else sub


def iter_group_runs(sub: Path) -> Iterator[Path]:
    """group_runs one run at a time (reader.iter_runs), for a caller that only asks whether there is one."""
    folder = group_folder(sub)
    return iter_runs(folder, recursive=folder != sub)


def group_runs(sub: Path) -> list[Path]:
    """The run CSVs of the group folder SUB (the rule in the module's docstring)."""
    return list(iter_group_runs(sub))


def _subfolders(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")) and p.name != KEY_FOLDER)


def is_class_folder(path: Path | str) -> bool:
    """PATH is a folder of group folders (the module's docstring): no runs, results/ or campaign.json of its
    own, and a subfolder with runs."""
    path = Path(path)
    if not path.is_dir() or (path / "results").is_dir() or (path / "campaign.json").exists():
        return False
    if any(iter_runs(path, recursive=False)):
        return False
    return any(any(iter_group_runs(sub)) for sub in _subfolders(path))


def _orphan_csvs(folder: Path, recursive: bool) -> list[Path]:
    """CSVs that look like run CSVs (their header starts with `event,`) but have no NAME.json beside them."""
    out = []
    for p in sorted(folder.rglob("*.csv") if recursive else folder.glob("*.csv")):
        if p.with_suffix(".json").exists():
            continue
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                head = f.readline()
        except OSError:
            continue
        if head.startswith("event,"):
            out.append(p)
    return out


def _reason(exc: Exception) -> str:
    """The reader's one-line reason, without the file's path (the caller names the file)."""
    if isinstance(exc, SchemaError):
        where = (f"line {exc.line}" if exc.line is not None else "") + \
            (f"{', ' if exc.line is not None else ''}column {exc.column!r}" if exc.column is not None else "")
        side = " (its sidecar)" if exc.file.endswith(".json") else ""
        return (f"{where}{side}: " if where or side else "") + exc.detail.replace("\n", " ")
    return f"{type(exc).__name__}: {exc}".replace("\n", " ")


def bench_sched(meta: dict) -> str | None:
    """The bench's scheduling of a run (sidecar bench.host.sched: 'fifo 10', 'nice -10', 'other'); None for a run
    not on the bench or a sidecar without it."""
    host = (meta.get("bench") or {}).get("host") if isinstance(meta.get("bench"), dict) else None
    sched = host.get("sched") if isinstance(host, dict) else None
    return str(sched) if sched else None


def real_time(sched: str) -> bool:
    return sched.startswith("fifo") or sched.startswith("rr")


def _stem(name: str, meta: dict) -> str:
    return meta.get("_stem") or name.split("/", 1)[-1]


def left_out_why(name: str, meta: dict) -> str | None:
    """Why a class run is left out of the figures (set aside, invalid), None when it is not. Judged on the run's
    own name (its stem), so an 8051 attempt ("NAME.attempt1 [8051]") is set aside like an AVR one."""
    what = (["set-aside attempt"] if is_set_aside(_stem(name, meta)) else []) + \
        ([f"invalid: {meta.get('invalid_reason') or 'no reason given'}"] if not meta.get("valid", True) else [])
    return "; ".join(what) or None


def _group_notes(g: Group, meta: dict[str, dict]) -> None:
    """One line per thing a teacher should know that is no fault of the files: 8051 runs (kept apart), runs left
    out (invalid, set aside), a bench without real-time priority. A group's runs of another profiler are one line
    a kind (step 6's demo hands in nine, with their attempts: a line each was 14 lines a group)."""
    other: dict[str, list[str]] = {}
    for r in g.runs:
        if (kind := profiler_kind(meta[r])) != "avr":
            other.setdefault(kind, []).append(_short(r) + (" (left out)" if left_out_why(r, meta[r]) else ""))
    for kind, runs in other.items():
        what = (f"{runs[0]}: a run of the {kind} profiler (docs/lab.md step 6), in rows of its own" if len(runs) == 1
                else f"{len(runs)} runs of the {kind} profiler (docs/lab.md step 6: {', '.join(runs)}), in rows "
                "of their own")
        g.note(f"{kind} run", f"{g.name}: {what}, never pooled with the AVR runs nor graded")
    for r in g.runs:
        m = meta[r]
        if profiler_kind(m) != "avr":      # said in its kind's line; an attempt of it is no AVR run either
            continue
        why = left_out_why(r, m)
        if why:
            g.note("set-aside attempt" if is_set_aside(_stem(r, m)) else "invalid run",
                   f"{g.name}: {_short(r)}: {why}; left out of the figures and the grading")
    scheds = [bench_sched(meta[r]) for r in g.runs if run_kind(meta[r]).endswith("bench")]
    slow = sorted({x for x in scheds if x and not real_time(x)})
    if slow:
        n = sum(1 for x in scheds if x in slow)
        g.note("bench not real-time", f"{g.name}: bench not real-time (bench.host.sched {', '.join(slow)} in {n} of "
               f"{len(scheds)} bench runs): paced figures may have longer tails and more stalls")


def read_key(path: Path) -> tuple[RunSet | None, list[str]]:
    """The key's runs in PATH/KEY_FOLDER (`mmrig lab key --out PATH/lab-key.md` writes them there): a RunSet, or
    None when there are none; one line per run the reader refused."""
    folder = path / KEY_FOLDER
    if not folder.is_dir():
        return None, []
    data, problems = read_each(find_runs(folder))
    return data, [f"the key ({KEY_FOLDER}/): {x}" for x in problems]


def read_class(path: Path | str) -> ClassRuns:
    """Reads every group of the class folder PATH run by run: a run the reader refuses is a problem line of its
    group (and, when its sidecar says which experiment it was, that experiment's row says so), the others are
    read. A run of the 8051 profiler is named "NAME [8051]" (reader.kind_label). A group without lab.html (the
    handout's hand-in) is a problem line; 8051 runs, invalid or set-aside runs and a bench without real-time
    priority are a note line each."""
    path = Path(path)
    groups, frames, meta = [], [], {}
    for sub in _subfolders(path):
        g = Group(sub.name, group_folder(sub))
        files = group_runs(sub)
        beside = find_runs(sub, recursive=False) if g.folder != sub else []
        if beside:
            g.problem("runs beside results/, not read",
                      f"{g.name}: {len(beside)} run(s) directly in {sub.name}/ not read ("
                      f"{', '.join(b.name for b in beside[:3])}{', ...' if len(beside) > 3 else ''}): "
                      f"the group's runs are those in {sub.name}/results/")
        for orphan in _orphan_csvs(g.folder, g.folder != sub):
            g.problem("CSV without its sidecar", f"{g.name}: {orphan.relative_to(path)}: no sidecar "
                      f"{orphan.with_suffix('.json').name} beside it, not read")
        for f in files:
            try:
                rs = read_run(f)                   # read once, then named GROUP/NAME below
            except (SchemaError, OSError, ValueError) as exc:   # the format; not a run the reader can take apart
                rel, why = str(f.relative_to(path)), _reason(exc)
                try:
                    cfg = read_sidecar(f.with_suffix(".json")).get("config")
                except (SchemaError, OSError, ValueError):
                    cfg = None
                g.unreadable.append((rel, why, cfg))
                g.problem("unreadable run", f"{g.name}: unreadable: {rel}: {why}")
                continue
            stem, run_meta = next(iter(rs.meta.items()))   # the sidecar's name, else the file's stem
            name = f"{g.name}/{kind_label(stem, run_meta)}"
            if name in meta:                       # two runs of one name in a group: their paths tell them apart
                name = f"{g.name}/{kind_label(str(f.relative_to(sub).with_suffix('')), run_meta)}"
            rs.df["run"] = name                    # what read_run(f, run=name) would have written, without a re-read
            run_meta["_group"] = g.name
            run_meta["_stem"] = stem
            frames.append(rs.df)
            meta[name] = run_meta
            g.runs.append(name)
            g.csv_sha256[name] = hashlib.sha256(f.read_bytes()).hexdigest()
        g.lab_html = next(iter(sorted(sub.rglob(LAB_HTML))), None)
        nothing = not g.runs and not g.problems
        if nothing:
            where = f"{sub.name}/results/" if g.folder != sub else f"{sub.name}/"
            g.problem("no runs", f"{g.name}: no runs (NAME.csv + NAME.json) in {where}"
                      + (f", no {LAB_HTML}" if g.lab_html is None else ""))
        elif g.lab_html is None:
            g.problem(f"no {LAB_HTML}", f"{g.name}: no {LAB_HTML} (the executed notebook with the answers: "
                      "docs/lab.md, \"What to hand in\")")
        _group_notes(g, meta)
        groups.append(g)
    key, key_problems = read_key(path)
    if not frames:
        return ClassRuns(None, groups, path, key, key_problems)
    return ClassRuns(typed_runset(pd.concat(frames, ignore_index=True), meta), groups, path, key, key_problems)


def target_flag(kind: str) -> str:
    """The table's flag for a run_kind: 'bench', 'boards', 'SYNTHETIC', 'SYNTHETIC (bench-like)'."""
    if kind.startswith("synthetic:"):
        return f"SYNTHETIC ({kind.split(':', 1)[1]}-like)"
    return TARGET_FLAGS.get(kind, f"target {kind}")


def _config_text(meta: dict) -> str:
    c = meta.get("config", {})
    return f"{c.get('mode')}, {c.get('distance')} ahead, load {load_condition(c.get('load'))}"


def _short(run: str) -> str:
    return run.split("/", 1)[1]


def _empty_row(g: Group, p: PaperRow, variant: str | None = None) -> Row:
    """A group without a readable AVR run of P (of VARIANT, when given): 'missing', or 'unreadable: FILE: REASON'
    when a file the reader refused is (by its sidecar's config) such a run, or may be (its sidecar unreadable
    too)."""
    def fills(cfg: dict) -> bool:
        return p.match(cfg) and (variant is None or variant_of(cfg) == variant)
    mine = [(f, why) for f, why, cfg in g.unreadable if cfg is not None and fills(cfg)]
    unknown = [(f, why) for f, why, cfg in g.unreadable if cfg is None]
    if mine:
        vd, flags = "; ".join(f"unreadable: {f}: {why}" for f, why in mine), "unreadable"
    elif unknown:
        vd = "no readable run of this experiment; " + "; ".join(
            f"unreadable (experiment not known): {f}: {why}" for f, why in unknown)
        flags = "missing or unreadable"
    else:
        vd, flags = "no run of this experiment handed in", "missing"
    label = g.name + (f" ({variant_label(variant)})" if variant and variant_label(variant) else "")
    return Row(g.name, variant or "", [], [], {h: None for h in TABLE_HEADERS} | {
        "group": label, "runs": "-", "verdict": vd, "flags": flags})


def experiment_rows(cr: ClassRuns, p: PaperRow) -> list[Row]:
    """One row per group and variant of P it has runs of (_variant: the executor's design, mixed mode's generation,
    normal mode's discipline) and profiler kind: runs of two variants or kinds are never pooled. A group without an
    AVR run of P's paper variant (PAPER_VARIANT) gets a row too, missing or unreadable, and so does an unreadable
    file of a variant the group has no readable run of: it shows in the row it would have filled."""
    data = cr.data
    rows = []
    want = PAPER_VARIANT.get(p.key)
    for g in cr.groups:
        if not g.runs:
            if g.unreadable:
                rows.append(_empty_row(g, p, want))
            continue
        assert data is not None
        matched = [r for r in g.runs if p.match(data.meta[r].get("config", {}))]
        avr = {variant_of(data.meta[r]["config"]) for r in matched if profiler_kind(data.meta[r]) == "avr"}
        if (want is None and not avr) or (want is not None and want not in avr):
            rows.append(_empty_row(g, p, want))
        lost = sorted({variant_of(cfg) for _, _, cfg in g.unreadable if cfg is not None and p.match(cfg)}
                      - avr - {want})
        rows += [_empty_row(g, p, v) for v in lost]
        # the AVR runs first, the paper's variant first among them
        keys = sorted({(profiler_kind(data.meta[r]) != "avr", profiler_kind(data.meta[r]),
                        variant_of(data.meta[r]["config"]) != want, variant_of(data.meta[r]["config"]))
                       for r in matched})
        for _, kind, _, v in keys:
            runs = [r for r in matched if profiler_kind(data.meta[r]) == kind and variant_of(data.meta[r]["config"]) == v]
            why = {r: left_out_why(r, data.meta[r]) for r in runs}
            shown = [r for r in runs if not why[r]]
            left = [(r, why[r]) for r in runs if why[r]]
            pooled = shown or [r for r, _ in left]
            sub = RunSet(data.df[data.df["run"].isin(pooled)].assign(_all="all"), {r: data.meta[r] for r in pooled})
            s = summarize(sub, by="_all", valid_only=False)
            s = s.iloc[0] if len(s) else None
            gens = {data.meta[r]["config"].get("generation") for r in pooled}
            bench = all(run_kind(data.meta[r]) == "bench" for r in pooled)
            if not shown:
                vd = "not a result: no valid run (see flags)"
            elif s is None:
                vd = "no events in these runs"
            else:
                vd = verdict(p, observed_from_row(s, gens.pop() if len(gens) == 1 else None, bench,
                                                  design(data.meta[pooled[0]]["config"])))
            kinds = sorted({run_kind(data.meta[r]) for r in runs})
            flags = [target_flag(k) for k in kinds]
            if kind != "avr":
                flags.append(f"{kind} profiler (step 6): apart from the AVR runs, not graded")
            scheds = sorted({x for r in pooled if (x := bench_sched(data.meta[r]))})
            if any(not real_time(x) for x in scheds):
                flags.append("bench not real-time")
            for r, w in left:
                flags.append(f"{_short(r)}: {w}")
            get = (lambda k: s[k]) if s is not None else (lambda k: None)
            label = g.name + (f" ({variant_label(v)})" if variant_label(v) else "") + \
                ("" if kind == "avr" else f" [{kind}]")
            rows.append(Row(g.name, v, shown, left, {
                "group": label,
                "runs": ", ".join(_short(r) for r in pooled) + ("" if shown else " (left out)"),
                "events": get("events"), "n (ok+late)": get("n"), "mean (us)": get("mean_us"),
                "var (us²)": get("var_us2"), "max (us)": get("max_us"), "ok / events": get("ok_share"),
                "bench sched": ", ".join(scheds) or "-",
                "verdict": vd, "flags": "; ".join(flags)}, kind, s))
    return rows


def experiment_figure(cr: ClassRuns, p: PaperRow, rows: list[Row], include_all: bool = False):
    """plots.cdf with one line per group: the group's valid, not set-aside runs of P pooled under the group's
    name; with INCLUDE_ALL each invalid or set-aside run is a line of its own, marked INVALID (never pooled with
    the valid ones). Every group of the class is a 'run' of the RunSet handed to plots.cdf, all with this
    experiment's config, so plots.run_colors gives a group the same colour in every experiment's figure."""
    data = cr.data
    assert data is not None
    left_all = {r for r in data.runs if left_out_why(r, data.meta[r])}
    lines: dict[str, list[str]] = {}
    for row in rows:
        if row.shown:
            lines[row.values["group"]] = row.shown
        if include_all:
            for r, _ in row.left_out:
                lines[f"{row.group}: {_short(r)}"] = [r]
    cfg = next((data.meta[r]["config"] for rs in lines.values() for r in rs), None)
    # one name per group (its row's, which starts with the group's name) in the groups' order, and with
    # INCLUDE_ALL one per left-out run of the whole class, so that the order, and with it every colour, is the
    # same in every experiment's figure
    labels: list[str] = []
    for g in cr.groups:
        if g.runs:
            labels += [row.values["group"] for row in rows if row.group == g.name] or [g.name]
            if include_all:
                labels += [f"{g.name}: {_short(r)}" for r in g.runs if r in left_all]
    frames = []
    meta = {}
    for label in labels:
        runs = lines.get(label, [])
        first = data.meta[runs[0]] if runs else next(iter(data.meta.values()))
        meta[label] = {"config": dict(cfg or first.get("config", {})), "timebase": first["timebase"],
                       "valid": not (set(runs) & left_all), "name": label}
        if runs:
            frames.append(data.df[data.df["run"].isin(runs)].assign(run=label))
    df = pd.concat(frames, ignore_index=True) if frames else data.df.iloc[:0].assign(run="")
    df["run"] = pd.Categorical(df["run"].astype(str), categories=labels)
    fig = plots.cdf(RunSet(df, meta), [lb for lb in labels if lb in lines])
    ax = fig.axes[0]
    absent = [(row.values["group"], "left out (invalid or set aside)" if row.left_out else "no run")
              for row in rows if not row.shown and not (include_all and row.left_out)]
    if absent:              # the legend names every group, the ones without a line too
        for label, why in absent:
            ax.plot([], [], " ", label=f"{label}: {why}")
        canvas.beside(ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0)))
    ax.set_title(f"{p.section} {p.experiment}: latency CDF, one line per group (ok + late, measurable events)"
                 + ("; invalid and set-aside runs shown, marked" if include_all else ""), fontsize=9)
    return canvas.fit(fig)


CDF_LINES = 8     # up to this many rows an experiment's figure is a CDF with a line each; beyond, a row each
                  # (classfigure): 20 groups with two designs were 41 CDF lines and a legend longer than the plot


def group_figure(cr: ClassRuns, p: PaperRow, rows: list[Row]):
    """classfigure.summary_figure of P: the key's runs of P on top (a row per variant, the paced run where the
    key has two), then a row per table row (group, variant, profiler kind; a row without a result says why)."""
    bands = []
    if cr.key is not None:
        mine: dict[str, list[str]] = {}
        for r, m in cr.key.meta.items():
            if m.get("valid", True) and profiler_kind(m) == "avr" and p.match(m.get("config", {})):
                mine.setdefault(variant_of(m["config"]), []).append(r)
        for v, runs in mine.items():
            runs.sort(key=lambda r: not (cr.key.meta[r].get("target") or {}).get("paced"))
            bands.append(band("key" + (f" ({variant_label(v)})" if variant_label(v) else ""), v, cr.key,
                              runs[:1], key=True))
    assert cr.data is not None
    for row in rows:
        v = row.variant + ("" if row.kind == "avr" else f" [{row.kind}]")
        why = "" if row.shown else str(row.values.get("flags") or "no run")
        bands.append(band(row.values["group"], v, cr.data, row.shown, shorten(why, 60)))
    return summary_figure(p, bands)


def _md_capped(headers: list[str], rows: list[list], notes: list[str]) -> str:
    """md_table with each flags cell cut to FLAG_CHARS and a note number [n] pointing to NOTES (appended)."""
    out = []
    for r in rows:
        r = list(r)
        i = headers.index("flags")
        if r[i] and len(str(r[i])) > FLAG_CHARS:
            notes.append(str(r[i]))
            r[i] = shorten(r[i], FLAG_CHARS - len(f" [{len(notes)}]")) + f" [{len(notes)}]"
        out.append(r)
    return md_table(headers, out)


def _group_line(g: Group, cr: ClassRuns, out: Path) -> tuple[str, str]:
    """The line above a group's grading table (Markdown, HTML): where its lab.html is, the bench's scheduling."""
    meta = cr.data.meta if cr.data is not None else {}
    scheds = sorted({x for r in g.runs if (x := bench_sched(meta[r]))})
    kinds = sorted({target_flag(run_kind(meta[r])) for r in g.runs})
    tail = f"; bench scheduling (bench.host.sched): {', '.join(scheds) or '-'}; targets: {', '.join(kinds) or '-'}"
    if g.lab_html is None:
        return f"**no {LAB_HTML}**{tail}.", f"<p><b>no {LAB_HTML}</b>{html.escape(tail)}.</p>"
    rel = os.path.relpath(g.lab_html, out)
    return (f"answers: [{rel}]({rel}){tail}.",
            f"<p>answers: <a href='{html.escape(rel, quote=True)}'>{html.escape(rel)}</a>{html.escape(tail)}.</p>")


def _avr_rows(tables: dict[str, list[Row]], g: Group) -> dict[str, list[Row]]:
    """G's AVR rows of each experiment table: what its grading and its line on the first page read."""
    return {k: [r for r in rs if r.group == g.name and r.kind == "avr"] for k, rs in tables.items()}


def glance(cr: ClassRuns, tables: dict[str, list[Row]], graded: dict[str, list]) -> list[GroupLine]:
    """One GroupLine a group (classsummary): its grading, the handout's runs it lacks, identical and short runs."""
    same = identical_handins(cr.groups)
    short = short_runs(cr.data, cr.groups)
    return [group_line(g, graded.get(g.name, []), missing_runs(g, _avr_rows(tables, g)), same.get(g.name, []),
                       short.get(g.name, [])) for g in cr.groups]


def first_page(cr: ClassRuns, lines: list[GroupLine], src: str) -> tuple[list[str], list[str]]:
    """The first page (Markdown, HTML lines): a sentence, one line a group, the problems and notes by kind."""
    counts = Counter(x.status for x in lines)
    key = f"the key's {len(cr.key.runs)} runs ({KEY_FOLDER}/)" if cr.key is not None else "no key"
    say = (f"{src}: {len(cr.groups)} groups: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
           + f"; graded against {key}. A group passed when every figure checked is as expected and none of the "
           "handout's nine runs nor lab.html is missing; 'look at' names what to read first (a failed check with "
           "its reason, an unreadable file, a copy of another group's runs, a short run). Details, tables and each "
           "group's grading below.")
    kinds = kinds_table(cr.groups, cr.key_problems)
    md = ["## Groups at a glance", "", say, "", md_table(LINE_HEADERS, [x.md_cells for x in lines]), ""]
    h = ["<h2>Groups at a glance</h2>", f"<p>{html.escape(say)}</p>", _glance_html(LINE_HEADERS,
                                                                                [x.cells for x in lines])]
    if kinds:
        md += ["Problems and notes by kind (every line under Problems below):", "",
               md_table(KIND_HEADERS, kinds), ""]
        h += ["<p>Problems and notes by kind (every line under Problems below):</p>",
              _glance_html(KIND_HEADERS, kinds)]
    return md, h


STATUSES = ("look at", "missing", "passed")
KIND_HEADERS = ["kind", "problem or note", "lines", "groups"]


def _glance_html(headers: list[str], rows: list[list[str]]) -> str:
    """A first-page table: text cells, left-aligned (PAGE_CSS right-aligns the detail tables' numbers)."""
    head = "".join(f"<th>{html.escape(x)}</th>" for x in headers)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<div class='wide'><table class='glance'>\n<thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody>\n" \
           "</table></div>"


@dataclass
class ClassReport:
    md: Path
    html: Path
    table: Path
    figures: Path
    tables: dict[str, list[Row]]


def class_report(path: Path | str | ClassRuns, out_dir: Path | str, title: str = "mmrig class overview",
                 figures: bool = True, include_all: bool = False) -> ClassReport:
    """Writes OUT_DIR/report.md, report.html, class.csv (every table's rows, with the experiment) and
    figures/cdf-KEY.png|svg for the class folder PATH (or the ClassRuns read from it)."""
    cr = path if isinstance(path, ClassRuns) else read_class(path)
    src = str(cr.path) if cr.path is not None else "(not named)"
    out = output_folder(out_dir)      # made if missing (its parent must exist), never through a planted link
    tables: dict[str, list[Row]] = {}
    figs: dict[str, list[Path]] = {}
    if cr.data is not None:
        for p in PAPER:
            rows = experiment_rows(cr, p)
            tables[p.key] = rows
            if figures and any(r.shown or (include_all and r.left_out) for r in rows):
                if len(rows) <= CDF_LINES:
                    figs[p.key] = plots.save(experiment_figure(cr, p, rows, include_all), out / "figures",
                                             f"cdf-{p.key}")
                else:
                    figs[p.key] = plots.save(group_figure(cr, p, rows), out / "figures", f"groups-{p.key}")
    flat = [{"section": p.section, "experiment": p.experiment, **r.values}
            for p in PAPER for r in tables.get(p.key, [])]
    table = pd.DataFrame(flat, columns=["section", "experiment", *TABLE_HEADERS])
    for c in ("events", "n (ok+late)"):
        table[c] = table[c].astype("Int64")     # counts stay whole numbers beside a missing group's empty cells
    write_frame(table, out / "class.csv", index=False)

    read = [g for g in cr.groups if g.runs]
    kinds = sorted({run_kind(m) for m in cr.data.meta.values()}) if cr.data is not None else []
    intro = (f"Class folder {src}: {len(cr.groups)} group folders, {len(read)} with runs, "
             f"{sum(len(g.runs) for g in read)} runs read; targets: {', '.join(kinds) or 'none'}. Each group's runs "
             "are those in GROUP/results/ when it exists, else directly in GROUP/. Runs are matched to the paper's "
             "experiments by their config (mode, distance, load; mixed mode's generation and normal mode's "
             "discipline get rows of their own), not by file name. A row pools the group's valid runs of the "
             "experiment; invalid runs and set-aside attempts are flagged with their reason and left out of the "
             "figures" + (" (shown here, marked: --all)" if include_all else " (--all shows them)") + "; a group "
             "with nothing else gets their figures, marked 'not a result'. Latency statistics are over the ok and "
             "late, measurable events; variances in us² (the paper's ms² x 1,000,000).")
    runs_line = ", ".join(f"{g.name} {len(g.runs)}" for g in cr.groups)
    md = [f"# {title}", ""]
    h = [f"<h1>{html.escape(title)}</h1>"]
    if any(k.startswith("synthetic") for k in kinds):
        warn = "SYNTHETIC DATA in this class (flagged per row): those numbers come from a model, not a measurement."
        md += [f"**{warn}**", ""]
        h.append(f"<p class='warn'><b>{html.escape(warn)}</b></p>")
    graded = {g.name: grade(cr.data, cr.key, _avr_rows(tables, g)) for g in cr.groups if g.runs} \
        if cr.data is not None else {}
    at_a_glance = glance(cr, tables, graded)
    first, first_h = first_page(cr, at_a_glance, src)
    md += first
    h += first_h
    md += ["## Details", "", intro, "", f"Runs per group: {runs_line}.", ""]
    h += ["<h2>Details</h2>", f"<p>{html.escape(intro)}</p>", f"<p>Runs per group: {html.escape(runs_line)}.</p>"]
    other = [f"{r} ({_config_text(cr.data.meta[r])})" for r in cr.data.runs
             if not any(p.match(cr.data.meta[r].get("config", {})) for p in PAPER)] if cr.data is not None else []
    if other:
        words = "Runs that are none of the paper's experiments (not in the tables): " + ", ".join(other) + "."
        md += [words, ""]
        h.append(f"<p>{html.escape(words)}</p>")
    if cr.problems or cr.notes:
        lines = [f"problem: {x}" for x in cr.problems] + [f"note: {x}" for x in cr.notes]
        md += ["## Problems", "", "One line each: a problem is a fault of the hand-in (a file missing or unreadable), "
               "a note what the tables do with a run (8051, invalid, set aside) or how it was made.", ""] + \
            [f"- {x}" for x in lines] + [""]
        h += [f"<h2>Problems</h2><details><summary>{len(lines)} lines, one each (summarised by kind on the first "
              "page)</summary><ul>"] + [f"<li>{html.escape(x)}</li>" for x in lines] + ["</ul></details>"]
    for p in PAPER:
        if p.key not in tables:
            continue
        rows = [[r.values[k] for k in TABLE_HEADERS] for r in tables[p.key]]
        head = f"{p.section} {p.experiment}"
        says = f"The paper: {p.says}."
        notes: list[str] = []
        md += [f"## {head}", "", says, "", _md_capped(TABLE_HEADERS, rows, notes), ""]
        if notes:
            md += ["Flags in full: " + " ".join(f"[{i}] {x}" for i, x in enumerate(notes, 1)), ""]
        h += [f"<h2>{html.escape(head)}</h2>", f"<p>{html.escape(says)}</p>", html_table(TABLE_HEADERS, rows, cap={"flags": FLAG_CHARS})]
        if p.key in figs:
            png, svg = figs[p.key][0], figs[p.key][1]
            what = "latency CDF, one line per group" if png.name.startswith("cdf-") else \
                "latency per group: min to max, p50 and p99, a row each, the key's rows on top"
            md += [f"![{head}: {what}](figures/{png.name})", ""]
            h.append(f"<figure><img src='figures/{html.escape(svg.name)}' alt='{html.escape(head)}'>"
                     f"<figcaption>{html.escape(head)}: {html.escape(what)}</figcaption></figure>")
        else:
            md += ["No figure: no group has a run of this experiment to draw.", ""]
            h.append("<p>No figure: no group has a run of this experiment to draw.</p>")
    if tables:
        src_key = (f"the key's runs in {KEY_FOLDER}/ ({len(cr.key.runs)} runs; `mmrig lab key --out CLASS/lab-key.md` "
                   "writes them there)" if cr.key is not None else
                   f"no key in this class folder (`mmrig lab key --out CLASS/lab-key.md` puts its runs in "
                   f"CLASS/{KEY_FOLDER}/, and they fill the key's column)")
        words = ("Per group, the figures the questions rest on: the group's (its valid AVR runs, pooled as in the "
                 f"tables above) beside the key's ({src_key}) and the range docs/lab-instructor.md \"Expected "
                 "ranges\" gives for the bench, read as a bound a better figure passes; 'as expected?' is yes, or no "
                 "with the reason, where there is something to check (within 10 % or 1 us of the key's figure, or "
                 "within the bound: bench runs only, generated ones posing as bench too), else '-'. Each figure "
                 "comes from the runs of its experiment and executor design (task dispatch, the paper's; never "
                 "pooled with ISR dispatch); a missed event under a host stall is the rig's, counted apart. The "
                 "written answers are in each group's lab.html.")
        md += ["## Grading: each group's figures beside the key's", "", words, ""]
        h += ["<h2>Grading: each group's figures beside the key's</h2>", f"<p>{html.escape(words)}</p>"]
        for g in cr.groups:
            line_md, line_h = _group_line(g, cr, out)
            rows = [x.cells for x in graded[g.name]] if g.runs else []
            md += [f"### {g.name}", "", line_md, ""] + ([md_table(GRADING_HEADERS, rows), ""] if rows else
                                                         ["No readable run.", ""])
            h += [f"<h3>{html.escape(g.name)}</h3>", line_h] + ([html_table(GRADING_HEADERS, rows)] if rows else
                                                               ["<p>No readable run.</p>"])
    atomic_write(out / "report.md", "\n".join(md).encode())
    atomic_write(out / "report.html", html_page(title, h).encode())
    return ClassReport(out / "report.md", out / "report.html", out / "class.csv", out / "figures", tables)


def headline(cr: ClassRuns, rep: ClassReport) -> list[str]:
    """A few lines for a terminal: groups and runs read, left out, then each problem and note on a line of its own."""
    read = [g for g in cr.groups if g.runs]
    left = sum(1 for r in cr.data.runs if left_out_why(r, cr.data.meta[r])) if cr.data is not None else 0
    lines = [f"class: {len(cr.groups)} group folders, {len(read)} with runs, {sum(len(g.runs) for g in read)} runs read"
             + (f"; {left} invalid or set aside (flagged in the tables, left out of the figures unless --all)"
                if left else "")]
    lines.append("runs per group: " + ", ".join(f"{g.name} {len(g.runs)}" for g in cr.groups))
    missing = sum(r.values["flags"] == "missing" for rows in rep.tables.values() for r in rows)
    if missing:
        lines.append(f"experiments missing from a group's hand-in: {missing} (rows marked 'missing')")
    lines += [f"problem: {x}" for x in cr.problems]
    lines += [f"note: {x}" for x in cr.notes]
    return lines

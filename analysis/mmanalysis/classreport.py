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

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from . import plots
from .csvsafe import write_frame
from .paper import PAPER, PaperRow, observed_from_row, verdict
from .reader import RunSet, find_runs, iter_runs, read_run, typed_runset
from .safefiles import atomic_write
from .report import html_page, html_table, md_table
from .schema import SchemaError, load_condition
from .selection import is_set_aside, run_kind, select
from .stats import summarize

TABLE_HEADERS = ["group", "runs", "events", "n (ok+late)", "mean (us)", "var (us²)", "max (us)", "ok / events",
                 "verdict", "flags"]
TARGET_FLAGS = {"bench": "bench", "boards": "boards", "synthetic": "SYNTHETIC"}


@dataclass
class Group:
    """One group's hand-in: where its runs were looked for, the runs read (names in the class RunSet) and
    one line per problem (a folder without runs, a run file the reader refused)."""
    name: str
    folder: Path
    runs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class ClassRuns:
    """Every readable run of the class in one RunSet (runs named GROUP/NAME, sidecar `_group`), and the groups."""
    data: RunSet | None
    groups: list[Group]
    path: Path | None = None

    @property
    def problems(self) -> list[str]:
        return [p for g in self.groups for p in g.problems]


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
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


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


def read_class(path: Path | str) -> ClassRuns:
    """Reads every group of the class folder PATH run by run: a run the reader refuses is a problem line of its
    group, the others are read."""
    path = Path(path)
    groups, frames, meta = [], [], {}
    for sub in _subfolders(path):
        g = Group(sub.name, group_folder(sub))
        files = group_runs(sub)
        beside = find_runs(sub, recursive=False) if g.folder != sub else []
        if beside:
            g.problems.append(f"{g.name}: {len(beside)} run(s) directly in {sub.name}/ not read ("
                              f"{', '.join(b.name for b in beside[:3])}{', ...' if len(beside) > 3 else ''}): "
                              f"the group's runs are those in {sub.name}/results/")
        for orphan in _orphan_csvs(g.folder, g.folder != sub):
            g.problems.append(f"{g.name}: {orphan.relative_to(path)}: no sidecar {orphan.with_suffix('.json').name} "
                              "beside it, not read")
        for f in files:
            try:
                rs = read_run(f)                   # read once, then named GROUP/NAME below
            except SchemaError as exc:
                g.problems.append(f"{g.name}: {exc}")
                continue
            except (OSError, ValueError) as exc:   # not a run the reader can take apart (binary, encoding)
                g.problems.append(f"{g.name}: {f.relative_to(path)}: unreadable ({type(exc).__name__}: {exc})")
                continue
            stem, run_meta = next(iter(rs.meta.items()))   # the sidecar's name, else the file's stem
            name = f"{g.name}/{stem}"
            if name in meta:                       # two runs of one name in a group: their paths tell them apart
                name = f"{g.name}/{f.relative_to(sub).with_suffix('')}"
            rs.df["run"] = name                    # what read_run(f, run=name) would have written, without a re-read
            run_meta["_group"] = g.name
            frames.append(rs.df)
            meta[name] = run_meta
            g.runs.append(name)
        if not g.runs and not g.problems:
            where = f"{sub.name}/results/" if g.folder != sub else f"{sub.name}/"
            g.problems.append(f"{g.name}: no runs (NAME.csv + NAME.json) in {where}")
        groups.append(g)
    if not frames:
        return ClassRuns(None, groups, path)
    return ClassRuns(typed_runset(pd.concat(frames, ignore_index=True), meta), groups, path)


def _variant(cfg: dict) -> str:
    """What tells two runs of one paper experiment apart that must not be pooled: mixed mode's event generation,
    normal mode's discipline (the clock servo, ours beside the paper's naive PC)."""
    if cfg.get("mode") == "mixed":
        return f"generation {cfg.get('generation') or 'aligned'}"
    if cfg.get("mode") == "normal":
        return "disciplined (clock servo)" if cfg.get("discipline") else "naive"
    return ""


def target_flag(kind: str) -> str:
    """The table's flag for a run_kind: 'bench', 'boards', 'SYNTHETIC', 'SYNTHETIC (bench-like)'."""
    if kind.startswith("synthetic:"):
        return f"SYNTHETIC ({kind.split(':', 1)[1]}-like)"
    return TARGET_FLAGS.get(kind, f"target {kind}")


def _config_text(meta: dict) -> str:
    c = meta.get("config", {})
    return f"{c.get('mode')}, {c.get('distance')} ahead, load {load_condition(c.get('load'))}"


@dataclass
class Row:
    """One group's runs of one experiment (one variant of it)."""
    group: str
    variant: str
    shown: list[str]        # valid, not set aside: pooled into the figures
    left_out: list[tuple[str, str]]   # (run, why)
    values: dict[str, Any]


def _short(run: str) -> str:
    return run.split("/", 1)[1]


def experiment_rows(cr: ClassRuns, p: PaperRow) -> list[Row]:
    """One row per group (and variant of P it has runs of); a group without a run of P gets a row too."""
    data = cr.data
    assert data is not None
    sel = select(data)
    why = dict(sel.left_out)
    rows = []
    for g in cr.groups:
        if not g.runs:
            continue
        matched = [r for r in g.runs if p.match(data.meta[r].get("config", {}))]
        if not matched:
            rows.append(Row(g.name, "", [], [], {h: None for h in TABLE_HEADERS} | {
                "group": g.name, "runs": "-", "verdict": "no run of this experiment handed in", "flags": "missing"}))
            continue
        variants = sorted({_variant(data.meta[r]["config"]) for r in matched})
        for v in variants:
            runs = [r for r in matched if _variant(data.meta[r]["config"]) == v]
            shown = [r for r in runs if r not in why]
            left = [(r, why[r]) for r in runs if r in why]
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
                vd = verdict(p, observed_from_row(s, gens.pop() if len(gens) == 1 else None, bench))
            kinds = sorted({run_kind(data.meta[r]) for r in runs})
            flags = [target_flag(k) for k in kinds]
            for r, _ in left:
                m = data.meta[r]
                what = (["set-aside attempt"] if is_set_aside(r) else []) + \
                    ([f"invalid: {m.get('invalid_reason') or 'no reason given'}"] if not m.get("valid", True) else [])
                flags.append(f"{_short(r)}: {'; '.join(what)}")
            get = (lambda k: s[k]) if s is not None else (lambda k: None)
            rows.append(Row(g.name, v, shown, left, {
                "group": g.name + (f" ({v})" if len(variants) > 1 or v.startswith(("generation free", "disc")) else ""),
                "runs": ", ".join(_short(r) for r in pooled) + ("" if shown else " (left out)"),
                "events": get("events"), "n (ok+late)": get("n"), "mean (us)": get("mean_us"),
                "var (us²)": get("var_us2"), "max (us)": get("max_us"), "ok / events": get("ok_share"),
                "verdict": vd, "flags": "; ".join(flags)}))
    return rows


def experiment_figure(cr: ClassRuns, p: PaperRow, rows: list[Row], include_all: bool = False):
    """plots.cdf with one line per group: the group's valid, not set-aside runs of P pooled under the group's
    name; with INCLUDE_ALL each invalid or set-aside run is a line of its own, marked INVALID (never pooled with
    the valid ones). Every group of the class is a 'run' of the RunSet handed to plots.cdf, all with this
    experiment's config, so plots.run_colors gives a group the same colour in every experiment's figure."""
    data = cr.data
    assert data is not None
    sel = select(data)
    left_all = {r for r, _ in sel.left_out}
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
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(f"{p.section} {p.experiment}: latency CDF, one line per group (ok + late, measurable events)"
                 + ("; invalid and set-aside runs shown, marked" if include_all else ""), fontsize=9)
    return fig


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
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, list[Row]] = {}
    figs: dict[str, list[Path]] = {}
    if cr.data is not None:
        for p in PAPER:
            rows = experiment_rows(cr, p)
            tables[p.key] = rows
            if figures and any(r.shown or (include_all and r.left_out) for r in rows):
                figs[p.key] = plots.save(experiment_figure(cr, p, rows, include_all), out / "figures", f"cdf-{p.key}")
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
    md += [intro, "", f"Runs per group: {runs_line}.", ""]
    h += [f"<p>{html.escape(intro)}</p>", f"<p>Runs per group: {html.escape(runs_line)}.</p>"]
    other = [f"{r} ({_config_text(cr.data.meta[r])})" for r in cr.data.runs
             if not any(p.match(cr.data.meta[r].get("config", {})) for p in PAPER)] if cr.data is not None else []
    if other:
        words = "Runs that are none of the paper's experiments (not in the tables): " + ", ".join(other) + "."
        md += [words, ""]
        h.append(f"<p>{html.escape(words)}</p>")
    if cr.problems:
        md += ["## Problems", ""] + [f"- {x}" for x in cr.problems] + [""]
        h += ["<h2>Problems</h2><ul>"] + [f"<li>{html.escape(x)}</li>" for x in cr.problems] + ["</ul>"]
    for p in PAPER:
        if p.key not in tables:
            continue
        rows = [[r.values[k] for k in TABLE_HEADERS] for r in tables[p.key]]
        head = f"{p.section} {p.experiment}"
        says = f"The paper: {p.says}."
        md += [f"## {head}", "", says, "", md_table(TABLE_HEADERS, rows), ""]
        h += [f"<h2>{html.escape(head)}</h2>", f"<p>{html.escape(says)}</p>", html_table(TABLE_HEADERS, rows)]
        if p.key in figs:
            png, svg = figs[p.key][0], figs[p.key][1]
            md += [f"![{head}: CDF per group](figures/{png.name})", ""]
            h.append(f"<figure><img src='figures/{html.escape(svg.name)}' alt='{html.escape(head)}'>"
                     f"<figcaption>{html.escape(head)}: latency CDF, one line per group</figcaption></figure>")
        else:
            md += ["No figure: no group has a run of this experiment to draw.", ""]
            h.append("<p>No figure: no group has a run of this experiment to draw.</p>")
    atomic_write(out / "report.md", "\n".join(md).encode())
    atomic_write(out / "report.html", html_page(title, h).encode())
    return ClassReport(out / "report.md", out / "report.html", out / "class.csv", out / "figures", tables)


def headline(cr: ClassRuns, rep: ClassReport) -> list[str]:
    """A few lines for a terminal: groups and runs read, left out, each problem on a line of its own."""
    read = [g for g in cr.groups if g.runs]
    left = len(select(cr.data).left_out) if cr.data is not None else 0
    lines = [f"class: {len(cr.groups)} group folders, {len(read)} with runs, {sum(len(g.runs) for g in read)} runs read"
             + (f"; {left} invalid or set aside (flagged in the tables, left out of the figures unless --all)"
                if left else "")]
    lines.append("runs per group: " + ", ".join(f"{g.name} {len(g.runs)}" for g in cr.groups))
    missing = sum(r.values["flags"] == "missing" for rows in rep.tables.values() for r in rows)
    if missing:
        lines.append(f"experiments missing from a group's hand-in: {missing} (rows marked 'missing')")
    lines += [f"problem: {x}" for x in cr.problems]
    return lines

"""A class folder planted from real runs, to check that the class report grades each group as its differences say:

    python -m mmanalysis.plantclass SOURCE CLASS [--groups 20] [--key KEYRUNS]

SOURCE is a folder of one student's runs (a `mmrig demo` results/ folder, or a key's lab-key-runs/), measured on
the bench; an 8051 run in SOURCE/8051/ (docs/lab.md step 6) is used for the 8051 group. Each group gets a copy of
one run per handout run (runvariant.HANDIN; the paced one where SOURCE has two), varied: group N drops the events
at the positions of N's set bits (event 0 for group 1, 1 for group 2, 0 and 1 for group 3, ...: no two groups
keep the same rows, and none loses more than five of 20 groups' worth); the rows stay the measured ones, the
sidecar's count, summary and csv_sha256 are made again from them and `planted` says so. Then, at fixed groups, what a real class has:

- group-03: its exp4 CSV cut short (corrupted: its sidecar's csv_sha256 no longer matches);
- group-05: no exp5 and no lab.html (missing);
- group-07: a byte-identical copy of group-02's hand-in;
- group-09: the 8051 run beside its AVR runs (in results/8051/), when SOURCE has one;
- group-11: its exp3 run cut to its first fifth (short);
- every other group: clean.

KEYRUNS (a key's lab-key-runs/) is copied to CLASS/lab-key-runs/, where the class report reads the key. CLASS/
planted.json lists what each group got: the test's expectations.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from .labkeyfiles import KEY_FOLDER
from .latstats import run_summary
from .paper import BY_KEY
from .reader import find_runs, profiler_kind, read_sidecar
from .runvariant import HANDIN, variant
from .safefiles import atomic_write, output_folder
from .schema import OUTCOMES
from .selection import is_set_aside
from .synth import cut_short

CORRUPTED, MISSING, COPY, I8051, SHORT = 3, 5, 7, 9, 11      # the planted groups (group-NN)
COPIED_FROM = 2                                              # group-07 hands in group-02's files
LAB_HTML = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>lab</title></head><body><p>Planted by "
            "mmanalysis.plantclass: a stand-in for the group's executed notebook, no answers.</p></body></html>\n")


@dataclass
class Planted:
    """What one group got: `clean`, or the planted difference, and the file it touched."""
    group: str
    what: str
    run: str | None = None


def handin_runs(source: Path) -> dict[str, Path]:
    """Per handout run (its short name, runvariant.HANDIN), SOURCE's AVR run of that experiment and variant (a
    valid one first, then the paced one where there are two: the students' runs are paced; never a set-aside
    NAME.attemptK); a handout run SOURCE lacks is left out."""
    found: dict[str, list[tuple[bool, bool, Path]]] = {}
    for csv in find_runs(source, recursive=False):
        meta = read_sidecar(csv.with_suffix(".json"))
        cfg = meta.get("config", {})
        if profiler_kind(meta) != "avr" or is_set_aside(csv.stem):     # an earlier try is no run to hand in
            continue
        for name, key, v in HANDIN:
            if BY_KEY[key].match(cfg) and variant(cfg) == v:
                found.setdefault(name, []).append((bool(meta.get("valid", True)),
                                                   bool((meta.get("target") or {}).get("paced")), csv))
    return {name: sorted(c, key=lambda x: (not x[0], not x[1], x[2].name))[0][2] for name, c in found.items()}


def dropped(n: int) -> list[int]:
    """The event positions group N leaves out: N's set bits (1 -> [0], 6 -> [1, 2])."""
    return [i for i in range(n.bit_length()) if n >> i & 1]


def copy_varied(csv: Path, dest: Path, drop: list[int], keep: int | None = None) -> Path:
    """SOURCE run CSV to DEST (a folder) without the events at the positions DROP (and only its first KEEP events
    when given): the CSV's lines as measured, the sidecar's count, summary and csv_sha256 made from them."""
    lines = csv.read_text(encoding="utf-8").splitlines(keepends=True)
    body = [line for i, line in enumerate(lines[1:]) if i not in drop]
    body = body[:keep] if keep is not None else body
    text = "".join([lines[0], *body])
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / csv.name
    atomic_write(out, text.encode())
    meta = json.loads(csv.with_suffix(".json").read_text(encoding="utf-8"))
    df = pd.read_csv(out)
    measured = df["outcome"].isin(["ok", "late"]) & df["measurable"].astype(bool)
    counts = {o: int((df["outcome"] == o).sum()) for o in OUTCOMES}
    meta["summary"] = run_summary(df.loc[measured, "latency_us"].to_numpy(dtype=float), counts,
                                  int((~df["measurable"].astype(bool)).sum()))
    meta.setdefault("config", {})["count"] = len(df)
    meta["csv_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    meta["planted"] = {"from": str(csv), "dropped_events_at": drop, "kept": len(df),
                       "note": "mmanalysis.plantclass: a measured run's rows, a subset of them"}
    atomic_write(out.with_suffix(".json"), (json.dumps(meta, indent=2) + "\n").encode())
    return out


def plant_class(source: Path, out: Path, groups: int = 20, key: Path | None = None) -> list[Planted]:
    """Writes the class folder OUT (the module's text) from the runs in SOURCE; returns what each group got."""
    runs = handin_runs(source)
    if not runs:
        raise ValueError(f"{source}: no run of the handout's experiments (NAME.csv + NAME.json)")
    i8051 = [c for c in find_runs(source / "8051", recursive=False)] if (source / "8051").is_dir() else []
    output_folder(out)          # (a link at OUT's name is refused: nothing written through it)
    planted = []
    for n in range(1, groups + 1):
        name = f"group-{n:02d}"
        g = out / name
        if g.exists():
            shutil.rmtree(g)
        if n == COPY and groups >= COPIED_FROM:
            shutil.copytree(out / f"group-{COPIED_FROM:02d}", g)
            planted.append(Planted(name, f"copy of group-{COPIED_FROM:02d}"))
            continue
        res = g / "results"
        drop = dropped(n)
        what: Planted = Planted(name, "clean")
        for short, csv in runs.items():
            if n == MISSING and short == "exp5":
                what = Planted(name, "missing", csv.stem)
                continue
            if n == SHORT and short == "exp3":
                total = len(csv.read_text(encoding="utf-8").splitlines()) - 1
                copy_varied(csv, res, [], keep=max(2, total // 5))
                what = Planted(name, "short", csv.stem)
                continue
            copied = copy_varied(csv, res, drop)
            if n == CORRUPTED and short == "exp4":
                cut_short(copied)
                what = Planted(name, "corrupted", csv.stem)
        if n == I8051 and i8051:
            for csv in i8051:
                copy_varied(csv, res / "8051", drop)
            what = Planted(name, "8051", i8051[0].stem)
        if n != MISSING:
            atomic_write(g / "lab.html", LAB_HTML.encode())
        planted.append(what)
    if key is not None:
        dest = out / KEY_FOLDER
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir()
        for csv in find_runs(key, recursive=False):
            for f in (csv, csv.with_suffix(".json")):
                shutil.copy2(f, dest / f.name)
    atomic_write(out / "planted.json", (json.dumps([asdict(p) for p in planted], indent=2) + "\n").encode())
    return planted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mmanalysis.plantclass", description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a folder of one student's runs (results/, lab-key-runs/)")
    ap.add_argument("out", type=Path, help="the class folder to write")
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--key", type=Path, default=None, help="a key's lab-key-runs/, copied to CLASS/lab-key-runs/")
    args = ap.parse_args(argv)
    try:
        for p in plant_class(args.source, args.out, args.groups, args.key):
            print(f"{p.group}: {p.what}" + (f" ({p.run})" if p.run else ""))
    except (ValueError, OSError) as exc:
        print(f"plantclass: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

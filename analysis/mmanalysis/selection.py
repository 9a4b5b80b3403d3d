"""Which runs figures and headline tables show by default: the valid ones that are not set-aside attempts.

`make demo` sets an attempt the host stalled aside as NAME.attemptK (kept, marked invalid) and runs the
experiment again; `mmrig report`, the lab notebook and every figure leave such attempts and any invalid run
out unless asked (`mmrig report --all`), and list them apart with their reasons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .reader import RunSet

ATTEMPT = re.compile(r"\.attempt\d+( \[[^\]]+\])?$")   # "NAME.attempt1 [8051]": read with the kind in its name


def is_set_aside(run: str) -> bool:
    """NAME.attemptK (or NAME.attemptK [8051], reader.kind_label's): an earlier try of the demo's experiment NAME,
    set aside."""
    return bool(ATTEMPT.search(run))


@dataclass
class Selection:
    shown: list[str]
    left_out: list[tuple[str, str]] = field(default_factory=list)   # (run, why)


def select(data: RunSet, include_all: bool = False) -> Selection:
    """The runs to show (all of them with INCLUDE_ALL) and the ones left out, each with its reason."""
    shown, left_out = [], []
    for run, meta in data.meta.items():
        why = []
        if is_set_aside(run):
            why.append(f"set-aside attempt of {ATTEMPT.sub('', run)}")
        if not meta.get("valid", True):
            why.append(f"invalid: {meta.get('invalid_reason') or 'no reason given'}")
        if why and not include_all:
            left_out.append((run, "; ".join(why)))
        else:
            shown.append(run)
    return Selection(shown, left_out)


def subset(data: RunSet, runs: list[str]) -> RunSet:
    """The RunSet of RUNS only (their rows, their sidecars), categories kept."""
    keep = set(runs)
    df = data.df[data.df["run"].isin(keep)].copy()
    df["run"] = df["run"].cat.set_categories([r for r in data.meta if r in keep])
    return RunSet(df, {r: m for r, m in data.meta.items() if r in keep})


def run_kind(meta: dict) -> str:
    """What a run is, from its sidecar: bench, boards, synthetic, or synthetic:KIND for generated data posing
    as a KIND run (synth.class_handins): drawn from a model, never a measurement, whatever it poses as."""
    kind = str((meta.get("target") or {}).get("kind"))
    if meta.get("synthetic"):
        return "synthetic" if kind in ("synthetic", "None") else f"synthetic:{kind}"
    return kind

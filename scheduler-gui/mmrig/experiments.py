"""The paper's experiments as the rig runs them, defined once: each one's name (its files are NAME.csv and
NAME.json), the title of its row in a table, the row of mmanalysis.paper it is compared with, and the run's
configuration.

`mmrig demo` (mmrig.demo) runs every one on the paced bench. The lab's answer key (mmrig.labkey) runs those
the handout asks about through `mmrig run` (`run_options`), choosing lockstep or paced per run and adding
runs of its own. docs/lab.md gives the students the same options for boards (analysis/tests/test_lab_doc.py
checks that they match).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mmanalysis.paper import BY_KEY, PAPER_EXECUTOR_LOAD, PaperRow

# The `mmrig run` option of each RunConfig field an experiment sets (mmrig.cli.run: run_config)
RUN_OPTIONS = {"mode": "--mode", "distance": "--distance", "generation": "--generation", "rate_ms": "--rate",
               "accuracy": "--accuracy", "discipline": "--discipline", "load": "--load", "dispatch": "--dispatch",
               "executor_load": "--executor-load"}


def option_value(value: Any) -> str:
    """A field's value as `mmrig run` takes it: 97.0 as 97, 1 as 1."""
    return format(value, "g") if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    paper_key: str | None   # mmanalysis.paper's row this experiment is compared with (None: ours only)
    # the RunConfig fields that make the experiment; every other field keeps RunConfig's default, which is
    # also `mmrig run`'s
    config: dict[str, Any]
    ours: str = ""          # what the paper column says when there is no paper row

    @property
    def paper(self) -> PaperRow | None:
        return BY_KEY.get(self.paper_key) if self.paper_key else None

    @property
    def paper_text(self) -> str:
        return self.paper.short if self.paper is not None else self.ours

    @property
    def loaded(self) -> bool:
        """Run under a PC load (stress-ng)."""
        return self.config.get("load", "idle") != "idle"

    def run_options(self) -> tuple[str, ...]:
        """The same run as `mmrig run` options, one per field of `config`, in its order (a switch, such as
        --discipline, when its field is true)."""
        out: list[str] = []
        for field, value in self.config.items():
            option = RUN_OPTIONS[field]
            if isinstance(value, bool):
                out += [option] if value else []
            else:
                out += [option, option_value(value)]
        return tuple(out)


# The rows compared with the paper run the paper's executor design (mmanalysis.paper.design): its timecode
# task executes the events (task dispatch, about 37 us), beside the executor's own work as the paper's did its
# GUI and serial thread (PAPER_EXECUTOR_LOAD). Our ISR dispatch runs as rows of its own ("ours") with the same
# executor load, so the two differ in the dispatch alone.
PAPERS = dict(dispatch="task", executor_load=PAPER_EXECUTOR_LOAD)
OURS = dict(dispatch="isr", executor_load=PAPER_EXECUTOR_LOAD)

EXPERIMENTS = (
    Experiment("exp1-verification", "1 executor alone (verification)", "executor",
               dict(mode="verification", distance=1, **PAPERS)),
    Experiment("exp1i-verification-isr", "1i executor alone, ISR dispatch", None,
               dict(mode="verification", distance=1, **OURS), ours="(ours: ISR dispatch)"),
    # the paper's naive PC: a plain sleep (accuracy 0, the default) until the moment to fire
    Experiment("exp2-normal", "2 normal mode (PC fires)", "normal", dict(mode="normal", distance=1)),
    # ours, beside the paper's naive PC: the same run fired by the clock servo (docs/normal-mode.md), so the
    # lab can tell the operating system's jitter from the PC's uncertainty about when a tick began
    Experiment("exp2b-normal-disciplined", "2b normal mode, disciplined", None,
               dict(mode="normal", distance=1, discipline=True), ours="(ours: clock servo)"),
    Experiment("exp3-mixed-1ahead", "3 mixed 1 ahead, tick-aligned", "mixed1",
               dict(mode="mixed", distance=1, generation="aligned", **PAPERS)),
    Experiment("exp3b-mixed-1ahead-free", "3b mixed 1 ahead, free-running", "mixed1",
               dict(mode="mixed", distance=1, generation="free", rate_ms=97.0, **PAPERS)),
    Experiment("exp4-mixed-2ahead", "4 mixed 2 ahead", "mixed2", dict(mode="mixed", distance=2, **PAPERS)),
    Experiment("exp4i-mixed-2ahead-isr", "4i mixed 2 ahead, ISR dispatch", None,
               dict(mode="mixed", distance=2, **OURS), ours="(ours: ISR dispatch)"),
    Experiment("exp5-mixed-2ahead-load", "5 mixed 2 ahead, heavy load", "loaded",
               dict(mode="mixed", distance=2, load="heavy", **PAPERS)),
)

BY_NAME = {ex.name: ex for ex in EXPERIMENTS}

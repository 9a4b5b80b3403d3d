"""The paper's section 7, defined once: its experiments, its figures (in us and us²) and the words we use to
say what a run of ours shows against each of them. `make demo`'s table (mmrig.demo) and `mmrig report`'s
comparison (mmanalysis.report) both take their paper column and their verdicts from here.

The paper (Hasan et al., "Mixed-mode Operating System for Real-time Performance", section 7) gives means in
ms and variances in ms² (it writes "variance of 36.52 ms" for normal mode; only ms² makes that consistent with
its other figures). The project shows variances in us²
everywhere (mmanalysis.variance_text): 1 ms² = 1e6 us², so the paper's 0.004809 ms² is 4,809 us².

Verdicts are statements that are true of the data they are given, never "better" where a row reproduces a
failure of the paper's:

- 7.4, 1 tick ahead, *free-running* generation (the paper's scheduling timer): the paper saw "about half" of
  its readings under 1 ms; a share of ok events within ABOUT_HALF reproduces that.
- 7.4, 1 tick ahead, *tick-aligned* generation (ours: the event is created right after the TIMECODE
  arrives) is not the paper's method: it leaves a whole tick for the SCHEDULE to travel, which is why every
  event can be on time. The verdict says so instead of comparing it with "about half".
- The paper's executor executed its events in its highest-priority timecode *thread* (its Table 2) beside
  its own work (a GUI, a serial thread). A run is the paper's design when the executor dispatches by its task
  (`dispatch task`) and nothing runs above that task (no `periodic` part in its executor load: that task sits
  above the timecode task). Only such runs are compared with the paper's executor, 2-ahead and loaded figures;
  ISR dispatch (ours: the pin-change interrupt writes the port, 22 cycles) is its own row, "ours", and a run
  with a task above the timecode task is no row of the paper's at all (`design`, below).
- On the virtual bench a latency with an idle executor is its dispatch on an exact simulated clock: every
  event takes the same time, variance 0. Comparing that mean and variance with the paper's says only that the
  firmware's path is short; the verdict says so.
  What on the bench can show the PC's load in mixed mode is the SCHEDULE frames' propagation delay and the
  slack left (mmanalysis.propagation), and missed events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .schema import NOMINAL_TICK_S, load_condition

MS2_TO_US2 = 1e6
ABOUT_HALF = (0.30, 0.70)    # shares of ok events we call "about half" (the paper gives no number)


@dataclass(frozen=True)
class PaperRow:
    """One experiment of the paper's section 7 and what the paper reports for it."""
    key: str
    section: str
    experiment: str
    match: Callable[[dict], bool]  # run config -> belongs to this experiment
    mean_us: float | None
    var_ms2: float | None          # as the paper gives it
    says: str                      # the paper's result in our units (us, us²)

    @property
    def var_us2(self) -> float | None:
        return None if self.var_ms2 is None else self.var_ms2 * MS2_TO_US2

    @property
    def short(self) -> str:
        """The paper's figure for a table cell: '39.1 us, var 4,809 us²' or its words."""
        if self.mean_us is None:
            return self.says.split(":")[0]
        from .latstats import variance_text
        m = self.mean_us
        mean = f"{m:,.0f}" if m >= 1000 else (f"{m:.1f}" if m == round(m, 1) else f"{m:g}")   # as the paper: 43.0
        return f"{mean} us, var {variance_text(self.var_us2)}"

    @property
    def note(self) -> str:
        return self.says


def on_grid(c: Mapping[str, Any]) -> bool:
    """A run whose events are due at moments inside ticks (mmsched/model/grid.py, docs/kilohertz.md): normal mode
    faster than one event a tick, or mixed mode's periodic generation (the executor fires a PERIODIC series).
    Not the paper's experiments, whose events were due at the start of a tick."""
    rate_ms = c.get("rate_ms")
    if c.get("mode") == "mixed":
        return c.get("generation") == "periodic"
    return (c.get("mode") == "normal" and c.get("rate") == "ms" and isinstance(rate_ms, (int, float))
            and rate_ms < NOMINAL_TICK_S * 1000)


# The executor's own work beside firing in the runs compared with the paper, in mmsched.model.exload's words: what
# the paper's executor did besides its timecode thread. Its GUI is our CPU-bound task below the dispatch
# (`cpu`: the core never sleeps, its critical sections are in the way now and then); its serial thread is our
# serial task with the run's own frames. Not `rx=N`: NOP frames share the PC's line with the SCHEDULEs (20 a
# second hold 14.6 % of it at 9600 baud) and would move the missed share of 1 tick ahead, one of the paper's
# results, by traffic the paper's line did not carry. `mmrig demo` and the lab run the paper's rows with it.
PAPER_EXECUTOR_LOAD = "cpu"

PAPER_DESIGN = "task"     # design(): the executor's timecode task executes the events, nothing runs above it
OUR_DESIGN = "isr"        # ours: the pin-change interrupt writes the event port
OTHER_DESIGN = "other"    # a task above the timecode task (the executor load's `periodic` part)
DESIGN_WORDS = {PAPER_DESIGN: "task dispatch, the paper's design", OUR_DESIGN: "ISR dispatch, ours",
                OTHER_DESIGN: "a task above the timecode task: neither the paper's design nor ours"}


def design(c: Mapping[str, Any]) -> str:
    """The executor design a run's config measured: PAPER_DESIGN, OUR_DESIGN or OTHER_DESIGN. Normal mode has
    no executor in the events' path: its design is the dispatch it was configured with, which no verdict
    reads. A sidecar without `dispatch` is from before task dispatch existed: ISR."""
    load = str(c.get("executor_load_text") or c.get("executor_load") or "none")
    if "periodic" in load:
        return OTHER_DESIGN
    return PAPER_DESIGN if c.get("dispatch") == "task" else OUR_DESIGN


def config_match(mode: str | None = None, distance: int | None = None, load: str | None = None,
                 designs: tuple[str, ...] = (PAPER_DESIGN, OUR_DESIGN)) -> Callable[[dict], bool]:
    """LOAD: a condition's name (True/False: all/idle, as sidecars before named loads said). A schedule grid's
    run matches none of the paper's experiments (`on_grid`), nor does a run whose executor design is not in
    DESIGNS (the paper's or ours: `design`); the verdict then keeps the two apart."""
    want = None if load is None else load_condition(load)

    def match(c: dict) -> bool:
        return ((mode is None or c.get("mode") == mode) and (distance is None or c.get("distance") == distance)
                and (want is None or load_condition(c.get("load")) == want) and not on_grid(c)
                and design(c) in designs)
    return match


DESIGNS = (PAPER_DESIGN, OUR_DESIGN, OTHER_DESIGN)   # normal mode: no executor in the events' path

PAPER: tuple[PaperRow, ...] = (
    PaperRow("executor", "7.2", "executor only (verification)", config_match("verification"), 39.1, 0.004809,
             "39.1 us mean, variance 4,809 us² (0.004809 ms²)"),
    PaperRow("normal", "7.3", "normal mode (PC fires), 1 tick ahead", config_match("normal", designs=DESIGNS), 14465.0, 36.52,
             "14,465 us mean, variance 36,520,000 us² (36.52 ms², the paper writes 'ms'); same further ahead"),
    PaperRow("mixed1", "7.4", "mixed, 1 tick ahead", config_match("mixed", 1, "idle"), None, None,
             "about half on time (under 1 ms): a SCHEDULE sometimes took over 71 ms to arrive"),
    PaperRow("mixed2", "7.4", "mixed, 2 ticks ahead", config_match("mixed", 2, "idle"), 43.0, 0.000378,
             "43.0 us mean, variance 378 us² (0.000378 ms²)"),
    PaperRow("loaded", "7.5", "mixed, 2 ticks ahead, PC under heavy load", config_match("mixed", 2, "heavy"), 47.03,
             0.001035, "47.03 us mean, variance 1,035 us² (0.001035 ms²)"),
)

BY_KEY: dict[str, PaperRow] = {p.key: p for p in PAPER}


@dataclass(frozen=True)
class Observed:
    """What a verdict is judged on: one run's (or a pool of runs') figures, from a sidecar summary or a
    `summarize` row. Latency figures are over the measured rows (mmanalysis.latstats.measured)."""
    events: int
    n: int
    mean_us: float | None
    var_us2: float | None
    ok: int
    early: int = 0
    missed: int = 0
    lost: int = 0
    generation: str | None = None    # mixed mode: aligned / free (config.generation)
    bench: bool = False              # every run from the virtual bench (target.kind)
    design: str | None = None        # the executor design of every run (`design`; None: not known or mixed)

    @property
    def ok_share(self) -> float | None:
        return self.ok / self.events if self.events else None

    @property
    def constant(self) -> bool:
        """Every measured latency equal (variance 0 over two or more)."""
        return self.n >= 2 and self.var_us2 == 0

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any], meta: Mapping[str, Any]) -> "Observed":
        """From a run's sidecar `summary` (docs/data-format.md) and the sidecar itself."""
        o = summary.get("outcomes") or {}
        return cls(events=int(summary.get("events") or sum(o.values())), n=int(summary.get("n") or 0),
                   mean_us=summary.get("mean_us"), var_us2=summary.get("variance_us2"), ok=int(o.get("ok", 0)),
                   early=int(o.get("early", 0)), missed=int(o.get("missed", 0)), lost=int(o.get("lost", 0)),
                   generation=(meta.get("config") or {}).get("generation"),
                   bench=(meta.get("target") or {}).get("kind") == "bench", design=design(meta.get("config") or {}))


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if v != v else v


def observed_from_row(row: Mapping[str, Any], generation: str | None, bench: bool,
                      design: str | None = None) -> Observed:
    """From a row of mmanalysis.summarize (events, ok, early, missed, lost, n, mean_us, var_us2)."""
    return Observed(events=int(row["events"]), n=int(row["n"]), mean_us=_num(row["mean_us"]), var_us2=_num(row["var_us2"]),
                    ok=int(row["ok"]), early=int(row["early"]), missed=int(row["missed"]), lost=int(row["lost"]),
                    generation=generation, bench=bench, design=design)


BENCH_CONSTANT = ("bench: one constant dispatch time by construction (exact simulated clock, nothing in the dispatch's way), so "
                  "variance 0 can be nothing else; it says the firmware's path is short, not how a board behaves")
# rows whose figure is the executor's latency: the design decides whether they compare with the paper's
LATENCY_ROWS = ("executor", "mixed2", "loaded")
BENCH_LOADED = "; the PC's load shows in the SCHEDULE propagation delay and slack instead"


def verdict(row: PaperRow, obs: Observed | None) -> str:
    """What OBS shows against ROW, in words that are true of OBS; early/missed/lost events always named."""
    if obs is None or obs.events == 0:
        return "no run"
    counts = [f"{k} {o}" for o, k in (("early", obs.early), ("missed", obs.missed), ("lost", obs.lost)) if k]
    tail = f"; {', '.join(counts)} of {obs.events} events" if counts else ""
    return _verdict(row, obs) + tail


def _verdict(row: PaperRow, obs: Observed) -> str:
    if row.key == "mixed1":
        share = obs.ok_share or 0.0
        if obs.generation == "aligned":
            return (f"{share:.0%} on time, not the paper's method: creating each event right after its TIMECODE "
                    "arrives leaves a whole tick for the SCHEDULE to travel")
        lo, hi = ABOUT_HALF
        gen = " (free-running generation, the paper's method)" if obs.generation == "free" else ""
        if lo <= share <= hi:
            return (f"{share:.0%} on time: reproduces the paper's 'about half'{gen}; events created late in a tick "
                    "leave the SCHEDULE too little time")
        return f"{share:.0%} on time: does not reproduce the paper's 'about half'{gen}"
    if obs.n < 2 or obs.mean_us is None or obs.var_us2 is None or row.mean_us is None or row.var_us2 is None:
        return "too few measured events"
    if row.key in LATENCY_ROWS and obs.design == OUR_DESIGN:
        words = (f"ours, not compared: ISR dispatch (the interrupt writes the port) is not the paper's design, whose "
                 f"timecode thread executed the events; mean {obs.mean_us:.3f} us is our dispatch path alone")
        return words + (f" ({BENCH_CONSTANT})" if obs.bench and obs.constant else "")
    mean_lower, var_lower = obs.mean_us < row.mean_us, obs.var_us2 < row.var_us2
    if mean_lower and var_lower:
        words = "mean and variance lower than the paper's"
    else:
        words = "not lower than the paper's: " + " and ".join(
            w for w, lower in (("mean", mean_lower), ("variance", var_lower)) if not lower)
    if obs.bench and obs.constant and row.key in ("executor", "mixed2", "loaded"):
        words += f" ({BENCH_CONSTANT}{BENCH_LOADED if row.key == 'loaded' else ''})"
    return words

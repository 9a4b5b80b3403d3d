"""The mmrig pytest plugin (entry point `pytest11: mmrig`, so an installed mmrig brings it): one HIL test
file runs on the virtual bench, in lockstep or on boards, and skips what the rig in hand cannot do.

Options:
    --rig bench|lockstep|ports   the paced virtual bench (default), the lockstep bench (virtual time granted
                                 by the host: deterministic figures), or boards on serial ports
    --profiler PORT --executor PORT   the boards' ports or pyserial URLs (imply --rig ports); no --executor:
                                 a profiler alone (normal mode only)
    --rig-results DIR            where every run's CSV + JSON is kept (default: mmrig-runs under pytest's
                                 temporary directory); with -n N each xdist worker writes under DIR/gwK
    --rig-break-us US            every run_experiment stops at the first event past US (or late, or missed) and
                                 its test fails naming it and the command that replays it traced (mmrig run
                                 --break-us's equivalent)
    --rig-retries N              paced bench: run again, up to N times, a run the host stalled (invalid by
                                 bench_lag, or an event a stall met did not end ok)
    --profiler-elf ELF --executor-elf ELF   the bench runs these images (your build) instead of the checkout's
                                 or the installed package's

Fixtures:
    rig             an opened `mmhil.Rig` (both nodes said HELLO with the right kind and version), on a bench of
                    its own (one per test, so `pytest -n 2` gives every worker its own) or on the boards
    bench           the `mmhil.Bench` under `rig` (faults, cuts, resets, VCD); skips on boards, saying why
    run_experiment  `run_experiment(**RunConfig fields) -> RunResult`: a whole `mmrig run` (its own bench, or
                    the boards), files kept under --rig-results and named in the JUnit XML and the report
    rig_target      what this session's rig is (kind, ports, capabilities, results directory)

Marker:
    @pytest.mark.rig_needs("executor", "bench", "faults", "paced", "lockstep")
                    the test is skipped, with the reason, on a rig that lacks one of them.

docs/hil.md is the guide.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

from mmhil.linemodel import LineModel, LineModelError
from mmproto import PROFILER_KINDS

if TYPE_CHECKING:
    import inspect

    from mmsched.model.result import RunResult

    from mmhil.bench import Bench
    from mmhil.rig import Rig

KINDS = ("bench", "lockstep", "ports")
# what a test may need -> (what it is, the kinds that have it)
CAPABILITIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "executor": ("an executor node", ("bench", "lockstep", "ports+executor")),
    "bench": ("the virtual bench", ("bench", "lockstep")),
    "faults": ("fault injection (the bench's control channel)", ("bench", "lockstep")),
    "paced": ("wall-clock time (normal mode measures the PC against it)", ("bench", "ports", "ports+executor")),
    "lockstep": ("lockstep time (figures that do not depend on the host)", ("lockstep",)),
    # the AVR profiler stamps the strobe by input capture, exact to a cycle; the 8051's polled input adds up to
    # 684 us (docs/hardware.md): figures of a few us need the first (boards: what was flashed, taken as the AVR)
    "capture": ("a profiler that stamps events by input capture (the AVR's; --rig-profiler-kind avr)",
                ("bench", "lockstep", "ports", "ports+executor")),
}
# A paced run is run again (--rig-retries) when the host, not the firmware, spoiled it: invalid by these, or
# an event a host stall displaced a byte of (not measurable) did not end ok.
HOST_REASONS = {"bench_lag", "bench_status"}
RUNS_KEY = pytest.StashKey[list[tuple[str, str]]]()
LOG_KEY = pytest.StashKey[list[str]]()


@dataclass(frozen=True)
class RigTarget:
    kind: str                      # bench, lockstep or ports
    profiler: str | None = None
    executor: str | None = None
    results: Path = Path("mmrig-runs")
    retries: int = 2
    baud: int = 9600
    profiler_elf: Path | None = None
    executor_elf: Path | None = None
    arduino: bool = False          # bench: both nodes as Arduino Megas (bootloader, reset on open; docs/bench.md)
    profiler_kind: str = "avr"     # bench: the AVR profiler, or the paper's 8051 on ucsim's core
    reset_on_open: bool = True     # boards: opening a port resets its node (a Mega's DTR): listen for its HELLO first
    break_us: float | None = None  # --rig-break-us: every run_experiment stops at the first event past it, and fails
    line_model: str = "ideal"      # bench: the USB-serial adapter on its lines (--rig-line, mmhil.linemodel)

    @property
    def flavour(self) -> str:
        return "ports+executor" if self.kind == "ports" and self.executor else self.kind

    def describe(self) -> str:
        if self.kind == "ports":
            return f"--rig ports (boards: profiler {self.profiler}, " + \
                   (f"executor {self.executor})" if self.executor else "no executor)")
        kind = {"bench": "--rig bench (the paced virtual bench", "lockstep":
                "--rig lockstep (the bench in lockstep: time granted by the host"}[self.kind]
        return kind + (", the 8051 profiler)" if self.profiler_kind == "8051" else ")")

    def lacks(self, needs: tuple[str, ...]) -> str | None:
        """Why this rig cannot run a test that needs `needs`, or None."""
        for need in needs:
            what, kinds = CAPABILITIES[need]
            if self.flavour not in kinds or (need == "capture" and self.profiler_kind != "avr"):
                return f"needs {what}; this rig is {self.describe()}"
        return None


# ---- options, markers, skips --------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mmrig", "mmrig HIL rig (docs/hil.md)")
    g.addoption("--rig", choices=KINDS, default=None,
                help="where the tests run: bench (the paced virtual bench, default), lockstep (the bench in "
                     "lockstep: host-independent figures) or ports (boards: --profiler, --executor)")
    g.addoption("--profiler", metavar="PORT", default=None, help="the profiler board's serial port or pyserial URL")
    g.addoption("--executor", metavar="PORT", default=None, help="the executor board's serial port or pyserial URL")
    g.addoption("--rig-results", metavar="DIR", type=Path, default=None,
                help="keep every run's CSV + JSON here (default: mmrig-runs under pytest's temporary directory)")
    g.addoption("--rig-retries", metavar="N", type=int, default=2,
                help="paced bench: run again, up to N times (default 2), a run the host stalled (invalid by bench_lag, "
                     "or an event a stall met did not end ok)")
    g.addoption("--rig-baud", metavar="BAUD", type=int, default=9600, help="the boards' baud rate (default 9600)")
    g.addoption("--profiler-elf", metavar="ELF", type=Path, default=None,
                help="bench: the profiler image to run (default: the checkout's or the installed package's)")
    g.addoption("--executor-elf", metavar="ELF", type=Path, default=None,
                help="bench: the executor image to run (default: the checkout's or the installed package's)")
    g.addoption("--rig-profiler-kind", choices=PROFILER_KINDS, default="avr",
                help="bench: the profiler image, avr (default) or 8051 (the paper's 87C51 on ucsim's core, polled input)")
    g.addoption("--rig-break-us", metavar="US", type=float, default=None,
                help="every run_experiment stops at the first event past US us (or late, or missed), as mmrig run "
                     "--break-us, and its test fails naming the event and the command that replays it traced")
    g.addoption("--rig-arduino", action="store_true",
                help="bench: both nodes behave as Arduino Megas (their stock bootloader, a reset when a port opens)")
    g.addoption("--no-reset-on-open", dest="reset_on_open", action="store_false",
                help="boards: opening the ports does not reset the nodes (no DTR reset): ask for HELLO at once")
    g.addoption("--rig-line", metavar="MODEL[:k=v]", default="ideal",
                help="bench: the USB-serial adapter on its lines, as mmrig run --line: ideal (default), "
                     "ftdi[:latency=MS] or cdc-16u2 (docs/usb-serial.md)")


def rig_kind(config: pytest.Config) -> str:
    kind = config.getoption("rig")
    if kind is None:
        return "ports" if config.getoption("profiler") or config.getoption("executor") else "bench"
    return kind


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rig_needs(*what): skip unless the rig has each of: "
                            + ", ".join(CAPABILITIES) + " (mmrig plugin, docs/hil.md)")
    profiler, executor = config.getoption("profiler"), config.getoption("executor")
    kind = rig_kind(config)
    if kind == "ports" and not profiler:
        raise pytest.UsageError("--rig ports needs --profiler PORT (and --executor PORT for mixed mode)")
    if kind != "ports" and (profiler or executor):
        raise pytest.UsageError(f"--profiler/--executor name board ports: use them with --rig ports, not --rig {kind}")
    if config.getoption("rig_arduino") and kind == "ports":
        raise pytest.UsageError("--rig-arduino makes the bench behave as Megas; boards are what they are")
    if config.getoption("rig_profiler_kind") != "avr" and kind == "ports":
        raise pytest.UsageError("--rig-profiler-kind chooses the bench's profiler; a board is what was flashed")
    try:
        line = LineModel.parse(config.getoption("rig_line"))
    except LineModelError as exc:
        raise pytest.UsageError(f"--rig-line: {exc}") from None
    if line.kind != "ideal" and kind == "ports":
        raise pytest.UsageError("--rig-line models the bench's USB-serial adapter; boards have theirs")
    if not config.getoption("reset_on_open") and kind != "ports":
        raise pytest.UsageError("--no-reset-on-open is for boards (--rig ports); the bench's ptys reset nothing")
    for option in ("profiler_elf", "executor_elf"):
        elf = config.getoption(option)
        if elf is not None and kind == "ports":
            raise pytest.UsageError(f"--{option.replace('_', '-')} is the bench's image: boards run what was flashed")
        if elf is not None and not Path(elf).is_file():
            raise pytest.UsageError(f"--{option.replace('_', '-')} {elf}: no such file")


def needs_of(item: pytest.Item) -> tuple[str, ...]:
    """The test's needs (its rig_needs markers'); a need that is not one, a keyword, or a marker with no need
    is a usage error naming the test and the needs there are."""
    needs: list[str] = []
    there = ", ".join(CAPABILITIES)
    for mark in item.iter_markers("rig_needs"):
        if mark.kwargs:
            given = ", ".join(f"{k}={v!r}" for k, v in mark.kwargs.items())
            raise pytest.UsageError(f"{item.nodeid}: rig_needs({given}): needs are named, not keywords "
                                    f"(rig_needs({', '.join(map(repr, mark.kwargs))})): one of {there}")
        if not mark.args:
            raise pytest.UsageError(f"{item.nodeid}: rig_needs() with no need: name one or more of {there}")
        for need in mark.args:
            if need not in CAPABILITIES:
                raise pytest.UsageError(f"{item.nodeid}: rig_needs({need!r}): one of {there}")
            needs.append(need)
    return tuple(needs)


def refuse_rig_and_run(item: pytest.Item) -> None:
    """A test takes `run_experiment` or the rig (`rig`, `bench`), never both, on every rig alike: a run opens a
    bench of its own, or the boards' serial ports, which the Rig holds open (on boards it could not run at all,
    on a bench it would not be the bench the test sees: its faults, its events). Refused at collection, before
    any port is opened."""
    names = set(getattr(item, "fixturenames", ()))
    rig = sorted({"rig", "bench"} & names)
    if "run_experiment" in names and rig:
        raise pytest.UsageError(
            f"{item.nodeid}: takes run_experiment and {' and '.join(rig)}: a run opens its own bench or the boards' "
            "ports, which the rig holds open; take one or the other (two tests), on every rig")


def target_of(config: pytest.Config) -> RigTarget:
    elf = {k: Path(v).resolve() if v is not None else None
           for k in ("profiler_elf", "executor_elf") for v in [config.getoption(k)]}
    return RigTarget(rig_kind(config), config.getoption("profiler"), config.getoption("executor"),
                     retries=config.getoption("rig_retries"), baud=config.getoption("rig_baud"),
                     arduino=config.getoption("rig_arduino"), reset_on_open=config.getoption("reset_on_open"),
                     profiler_kind=config.getoption("rig_profiler_kind"), break_us=config.getoption("rig_break_us"),
                     line_model=LineModel.parse(config.getoption("rig_line")).spec, **elf)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    target = target_of(config)
    for item in items:
        refuse_rig_and_run(item)
        why = target.lacks(needs_of(item))
        if why is not None:
            item.add_marker(pytest.mark.skip(reason=why))


def pytest_report_header(config: pytest.Config) -> str | None:
    uses = config.getoption("rig") or config.getoption("profiler") or config.getoption("rig_results")
    if not uses:
        return None
    results = config.getoption("rig_results")
    return f"mmrig: {target_of(config).describe()}; run files in {results or 'mmrig-runs under the basetemp'}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """The files of the test's runs, as a section of its report (shown with a failure)."""
    report = yield
    if report.when == "call":
        if runs := item.stash.get(RUNS_KEY, None):
            report.sections.append(("mmrig runs", "\n".join(f"{what}: {path}" for what, path in runs)))
        if log := item.stash.get(LOG_KEY, None):
            report.sections.append(("mmrig log", "\n".join(log)))
    return report


def record(node: pytest.Item, what: str, path: Path | str) -> None:
    """A file of the test's: a JUnit XML property of its testcase and a line of its report section."""
    node.stash.setdefault(RUNS_KEY, []).append((what, str(path)))
    node.user_properties.append((f"mmrig_{what}", str(path)))


# ---- fixtures -------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def rig_target(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> RigTarget:
    """What this session's rig is; its `results` directory exists."""
    results = pytestconfig.getoption("rig_results")
    if results is None:
        results = tmp_path_factory.getbasetemp() / "mmrig-runs"   # xdist: each worker has its own basetemp
    elif "PYTEST_XDIST_WORKER" in os.environ:
        results = Path(results) / worker()                          # -n N: DIR/gw0, DIR/gw1, ... share nothing
    results = Path(results).resolve()
    results.mkdir(parents=True, exist_ok=True)
    return dataclasses.replace(target_of(pytestconfig), results=results)


SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(nodeid: str) -> str:
    """A test's run files' name from its whole node id (the path from the rootdir, the class, the test, its
    parameters), so that two suites' `test_lat.py::test_run` never share one:
    suite_a/test_lat.py::Cls::test_x[a-1] -> suite_a/test_lat/Cls.test_x-a-1. Where making it a file name lost
    something (a character a file name cannot hold, a `..`), a digest of the node id follows, so that two node
    ids never give one name: test_x[a/b] -> test_x-a-b-1c2d3e4f."""
    path, _, name = nodeid.partition("::")
    test, _, params = name.partition("[")
    params = params[:-1] if params.endswith("]") else params
    parts = [*Path(path).with_suffix("").parts, test.replace("::", ".")]
    clean = [SAFE.sub("-", part).strip("-") for part in parts]
    clean = [c if c not in ("", ".", "..") else "_" for c in clean]
    lossy = clean != parts
    if params:
        safe = SAFE.sub("-", params).strip("-") or "_"
        lossy = lossy or safe != params
        clean[-1] += "-" + safe
    if lossy:
        clean[-1] += "-" + hashlib.sha256(nodeid.encode()).hexdigest()[:8]
    return "/".join(clean)


def worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def rig_missing(target: RigTarget) -> str | None:
    """Why this session has no rig, in one line, or None: the bench cannot be built (its program, the images),
    or a board's port is not there. Asked once a session (`_mmrig_ready`), so `make` is tried once."""
    if target.kind == "ports":
        for node, port in (("profiler", target.profiler), ("executor", target.executor)):
            if port and "://" not in port and not os.path.exists(port):
                return f"--{node} {port}: no such port (is the board plugged in? `mmrig boards` lists the ports)"
        return None
    from mmhil.bench import BenchError, ensure_built

    try:
        ensure_built(target.profiler_elf, target.executor_elf, target.profiler_kind)
    except BenchError as exc:
        return (f"the virtual bench cannot be built ({str(exc).splitlines()[0]}); build it (`make build`), or "
                "give boards with --profiler PORT --executor PORT")
    except OSError as exc:
        return f"the virtual bench cannot be built ({exc}); build it (`make build`), or give boards"
    return None


@pytest.fixture(scope="session")
def _mmrig_ready(rig_target: RigTarget) -> RigTarget:
    """The rig is there, checked once a session: without it every test that uses it (rig, bench,
    run_experiment) ERRORs at setup with the same one line, never FAILs as a latency would, and the build is
    tried once (pytest keeps a session fixture's failure and raises it again for each test)."""
    why = rig_missing(rig_target)
    if why is not None:
        pytest.fail(f"mmrig: no rig: {why}", pytrace=False)
    return rig_target


@pytest.fixture
def _mmrig_bench(_mmrig_ready: RigTarget) -> Iterator["Bench | None"]:
    """A bench of the test's own (none on boards): paced with the host's real-time service, as `mmrig run`
    has it, or lockstep. Its run directory is a fresh temporary one, so parallel workers share nothing."""
    rig_target = _mmrig_ready
    if rig_target.kind == "ports":
        yield None
        return
    from mmhil.bench import Bench, BenchError
    from mmhil.endpoint import raise_priority

    bench = Bench(lockstep=rig_target.kind == "lockstep", realtime=rig_target.kind == "bench",
                  profiler_elf=rig_target.profiler_elf, executor_elf=rig_target.executor_elf,
                  arduino=rig_target.arduino, profiler_kind=rig_target.profiler_kind,
                  line_model=rig_target.line_model)
    try:
        bench.start()
    except BenchError as exc:
        pytest.fail(f"the virtual bench did not start: {str(exc).splitlines()[0]}", pytrace=False)
    if rig_target.kind == "bench":
        raise_priority(bench.pid)
    try:
        yield bench
    finally:
        bench.close()


@pytest.fixture
def bench(request: pytest.FixtureRequest, rig_target: RigTarget) -> "Bench":
    """The virtual bench under `rig` (the same one when a test takes both). Skips on boards."""
    if rig_target.kind == "ports":
        pytest.skip(f"needs the virtual bench; this rig is {rig_target.describe()}")
    return request.getfixturevalue("_mmrig_bench")


@pytest.fixture
def rig(request: pytest.FixtureRequest, rig_target: RigTarget, _mmrig_bench: "Bench | None") -> Iterator["Rig"]:
    """An opened Rig: on the test's bench, or on the boards. The events it ended are kept as JSON beside the
    runs (`<results>/<test file path>/<test>.rig.json`, named by its whole node id: safe_name)."""
    from mmhil.rig import Rig, RigError

    if _mmrig_bench is not None:
        r = Rig.on_bench(_mmrig_bench)
    else:
        assert rig_target.profiler is not None
        r = Rig(rig_target.profiler, rig_target.executor, baud=rig_target.baud, reset_on_open=rig_target.reset_on_open)
    try:
        r.open()
    except RigError as exc:
        pytest.fail(f"rig ({rig_target.describe()}): {str(exc).splitlines()[0]}", pytrace=False)
    try:
        yield r
    finally:
        r.close()
        if r.results:
            write_rig_events(request.node, rig_target, r)


def write_rig_events(node: pytest.Item, target: RigTarget, r: "Rig") -> None:
    import json

    from mmanalysis.safefiles import atomic_write     # here: the plugin loads in every session, and stays light

    path = target.results / f"{safe_name(node.nodeid)}.rig.json"
    # the test file's folders under the session's results are the plugin's own, made here as run_experiment makes
    # them: a write makes no folder on the way (safefiles)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"test": node.nodeid, "rig": target.describe(), "worker": worker(),
           "bench_run_dir": str(r.bench.run_dir) if r.bench is not None else None,
           "hello": {n: dataclasses.asdict(h) for n, h in r.hellos.items()},
           "executor_load": r.executor_load, "phases_covered": r.phases_covered, "phase_bins": r.phase_bins,
           "events": [dataclasses.asdict(e) for e in r.results]}
    atomic_write(path, (json.dumps(doc, indent=1) + "\n").encode())
    record(node, "rig_events", path)


@dataclass
class Experiment:
    """`run_experiment(**config) -> RunResult`: one whole `mmrig run` of the test's."""

    node: pytest.Item
    target: RigTarget
    runs: int = 0
    log: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"run_experiment({self.target.describe()}; runs kept in {self.target.results})"

    @property
    def __signature__(self) -> "inspect.Signature":
        """What `inspect.signature(run_experiment)` and help() show: every keyword it takes, RunConfig's fields
        (but `out`: the plugin names the files) with their defaults, then require_valid and lag_bound_us."""
        import inspect
        from dataclasses import MISSING, fields

        from mmsched.model.config import RunConfig

        kw = inspect.Parameter.KEYWORD_ONLY
        params = [inspect.Parameter(f.name, kw, annotation=f.type, default=(
                      f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
                      if f.default_factory is not MISSING else inspect.Parameter.empty))
                  for f in fields(RunConfig) if f.name != "out"]
        params += [inspect.Parameter("require_valid", kw, annotation=bool, default=True),
                   inspect.Parameter("lag_bound_us", kw, annotation="float | None", default=None)]
        return inspect.Signature(params, return_annotation="RunResult")

    def __call__(self, *, require_valid: bool = True, lag_bound_us: float | None = None, **config: Any) -> "RunResult":
        from dataclasses import fields

        from mmproto import LinkError
        from mmsched.model.config import RunConfig
        from mmsched.link.endpoint import EndpointError
        from mmsched.run.runner import run

        known = {f.name for f in fields(RunConfig)} - {"out"}
        unknown = sorted(set(config) - known)
        if unknown:
            pytest.fail(f"run_experiment: unknown option {', '.join(map(repr, unknown))} (RunConfig fields: "
                        f"{', '.join(sorted(known))}; and require_valid, lag_bound_us)", pytrace=False)
        mode = config.get("mode", "mixed")
        if mode == "normal" and self.target.kind == "lockstep":
            pytest.skip("normal mode measures the PC against wall time, and in lockstep the PC is never late by "
                        "construction: run it with --rig bench or --rig ports")
        if mode != "normal" and self.target.kind == "ports" and not self.target.executor:
            pytest.skip(f"{mode} mode needs an executor; this rig is {self.target.describe()}")
        session_break = self.target.break_us is not None and "break_us" not in config
        if session_break:
            config["break_us"] = self.target.break_us
        self.runs += 1
        name = safe_name(self.node.nodeid) + (f"-{self.runs}" if self.runs > 1 else "")
        attempts = 1 + (self.target.retries if self.target.kind == "bench" else 0)
        for attempt in range(attempts):
            out = self.target.results / (name + (f".retry{attempt}" if attempt else ""))
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                cfg = RunConfig(**{"name": out.name, **config, "out": out})
            except (TypeError, ValueError) as exc:
                pytest.fail(f"run_experiment: {exc}", pytrace=False)
            try:
                result = run(cfg, self.endpoint(lag_bound_us), log=self.log.append)
            except (LinkError, EndpointError) as exc:
                pytest.fail(f"run_experiment ({self.target.describe()}): {str(exc).splitlines()[0]}", pytrace=False)
            if result.csv_path is not None:
                record(self.node, "csv", result.csv_path)
                record(self.node, "json", result.json_path)
            stalled = [e for e in result.events if not e.measurable and e.outcome != "ok"]
            if result.valid and not stalled or not result.valid and not set(result.reasons) <= HOST_REASONS:
                break
            why = f"invalid by {', '.join(result.reasons)}" if not result.valid else \
                f"{len(stalled)} event(s) a host stall displaced ended {', '.join(sorted({e.outcome for e in stalled}))}"
            self.log.append(f"run {out.name}: {why} (the host's, not the firmware's): run again")
        if require_valid and not result.valid:
            pytest.fail(f"invalid run, not a result ({', '.join(result.reasons)}: "
                        f"{result.sidecar.get('invalid_reason')}): {result!r}", pytrace=False)
        b = result.sidecar.get("break") or {}
        if session_break and b.get("event") is not None:
            lat = "no latency" if b.get("latency_us") is None else f"{b['latency_us']:.3f} us"
            replay = (f"mmrig replay {result.csv_path} --around {b['event']} --keep {result.csv_path.parent}"
                      if (result.sidecar.get("inputs") or {}).get("complete") and result.csv_path else
                      "a lockstep run is made again by running it again (mmrig run ... --trace)")
            pytest.fail(f"--rig-break-us {b['us']:g}: event {b['event']} ({b['outcome']}, {lat}) at tick "
                        f"{b['scheduled_tc']}; replay it traced: {replay}", pytrace=False)
        return result

    def endpoint(self, lag_bound_us: float | None) -> Any:
        from mmsched.link.endpoint import Boards

        from mmrig.endpoints import Target, choose_endpoint

        t = self.target
        where = Target.of(t.profiler if t.kind == "ports" else None, t.executor, lockstep=t.kind == "lockstep",
                          baud=t.baud, reset_on_open=t.reset_on_open, profiler_elf=t.profiler_elf,
                          executor_elf=t.executor_elf, arduino=t.arduino, profiler_kind=t.profiler_kind,
                          line_model=t.line_model,
                          lag_bound_us=lag_bound_us)
        endpoint = choose_endpoint(where)
        if isinstance(endpoint, Boards):
            for warning in endpoint.warnings():
                print(f"mmrig: WARNING: {warning.text}", file=sys.stderr)
        return endpoint


@pytest.fixture
def run_experiment(request: pytest.FixtureRequest, _mmrig_ready: RigTarget) -> Experiment:
    """`run_experiment(mode="mixed", distance=2, dispatch="isr", count=50) -> RunResult`: a whole `mmrig run`
    (keywords: RunConfig's fields; `require_valid=False` returns an invalid run instead of failing the test).
    On the paced bench a run the host stalled is run again (--rig-retries). Each run's files are kept under
    --rig-results, named in the JUnit XML (properties mmrig_csv, mmrig_json) and in the failure report."""
    return Experiment(request.node, _mmrig_ready, log=request.node.stash.setdefault(LOG_KEY, []))

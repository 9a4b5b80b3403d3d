"""The run data format (docs/data-format.md), as the writer writes it and the loader checks it."""

from __future__ import annotations

FORMAT = "mmrig-run"
FORMAT_VERSION = 6
# Version 1 had no measurability columns: its rows read as measurable (no host stall was known then).
# Version 2 had no latency budget: its rows read with empty budget columns.
# Version 3 had no due_counts: every event was due at the start of its tick, its rows read with 0.
# Version 4 had no write_us: its budget's line_us holds the write call too; its rows read with it empty.
# Version 5 had no in_stats: its rows read with it derived from outcome and measurable (in_stats below).
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6)

# (column, kind, nullable) in the order docs/data-format.md lists them.
# kind: "int" -> nullable Int64, "float" -> float64, "str" -> categorical or string, "bool" -> bool.
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("event", "int", False),
    ("tag", "int", False),
    ("event_id", "int", False),
    ("mode", "str", False),
    ("distance", "int", False),
    ("scheduled_tc", "int", False),
    # Version 4: the event is due this many profiler counts into tick scheduled_tc (0: at its start, every event
    # of the paper and of mixed mode; a schedule grid's moments inside a tick otherwise: mmsched.model.grid). The
    # latency is measured from that moment (protocol/SPEC.md section 7).
    ("due_counts", "int", False),
    ("created_tc", "int", False),
    ("created_phase", "float", True),
    ("sent_s", "float", True),
    ("ack_tc", "int", True),
    ("ack_phase", "float", True),
    ("slack_ticks", "float", True),
    ("fired_tc", "int", True),
    ("result_tc", "int", True),
    ("result_counts", "int", True),
    ("latency_counts", "int", True),
    ("latency_us", "float", True),
    ("outcome", "str", False),
    ("reason", "str", True),
    # Measurability (version 2): False when a host stall of the paced bench displaced a byte the event's figure
    # depends on past the bound (docs/bench.md, "Validity by cause"), or the scheduler made it late; stall_us is
    # by how much (also on a measurable mixed event whose bytes were displaced so but which still ended on time).
    # The outcome stays; latency statistics leave such events out and count them.
    ("measurable", "bool", False),
    ("stall_us", "float", True),
    # The latency budget (version 3, normal mode only; docs/normal-mode.md): a measured normal-mode latency
    # split into est_error_us (the firing target minus the tick's start as the profiler's own FIRE stamps
    # place it), wakeup_us (the firing thread's write minus its target, host clock), write_us (version 5: the
    # write call itself, from its start to its return, host clock), line_us (the write's return to the
    # profiler's stamp, beyond the fastest FIRE of its window) and floor_us (the profiler's own part, from the
    # floor calibration; 0 where none was possible). The five add up to latency_us. Empty otherwise.
    ("est_error_us", "float", True),
    ("wakeup_us", "float", True),
    ("line_us", "float", True),
    ("floor_us", "float", True),
    ("write_us", "float", True),
    # Version 6: the row is in the summary's figures (outcome ok or late, and measurable: in_stats below), so that
    # bare pandas gives the summary: df[df.in_stats].latency_us.mean() is summary.mean_us, where a plain
    # df.latency_us.mean() also takes early rows' negative latencies and the rows a host stall left out.
    ("in_stats", "bool", False),
)
BUDGET_COLUMNS = ("est_error_us", "wakeup_us", "write_us", "line_us", "floor_us")
NAN = float("nan")
# Columns an older file does not have, by the version that added them, with the value its rows read as.
DEFAULTS_BEFORE = {2: {"measurable": True, "stall_us": NAN}, 3: {c: NAN for c in BUDGET_COLUMNS if c != "write_us"},
                   4: {"due_counts": 0}, 5: {"write_us": NAN}}
# Columns the writer derives from others (no field of an event of its own); a file older than the version that
# added one reads it derived by the same rule.
DERIVED_COLUMNS = {"in_stats": 6}


def missing_defaults(version: int) -> dict[str, object]:
    """The columns a file of `version` lacks, with the value its rows read as."""
    out: dict[str, object] = {}
    for added, cols in DEFAULTS_BEFORE.items():
        if version < added:
            out.update(cols)
    return out
COLUMN_NAMES = tuple(c for c, _, _ in COLUMNS)

OUTCOMES = ("ok", "late", "early", "missed", "lost")
MEASURED = ("ok", "late")  # latency statistics are over these rows only (and only the measurable ones)


def in_stats(outcome: str | None, measurable: bool) -> bool:
    """Whether a row is in the summary's latency figures: a measured outcome (ok, late: each has a latency)
    and measurable. The one rule for the writer's `in_stats` column and the reader's check of it."""
    return outcome in MEASURED and bool(measurable)

# A run is invalid when more than this share of its events is not measurable (docs/bench.md).
MAX_UNMEASURABLE_SHARE = 0.05
MODES = ("mixed", "normal", "verification")
REASONS = ("late", "early", "past_due", "duplicate", "list_full", "bad_value", "timeout", "seq_gap", "result_lost",
           "link_fault", "node_reset", "timecode_fault", "no_answer", "injected_delay")
# The reasons of a `lost` row that name a fault of the rig (mmsched.verdict.faults), never of the system under test.
FAULT_REASONS = ("seq_gap", "result_lost", "link_fault", "node_reset", "timecode_fault", "no_answer",
                 "injected_delay")

DEFAULT_LATE_BOUND_US = 1000.0
# A campaign's rates in ticks ('tick', '2ticks': docs/campaigns.md) are of the nominal tick, the paper's 71.111 ms
# (12 x 65536 / 11.0592 MHz), which both profilers run
NOMINAL_TICK_S = 12 * 65536 / 11_059_200

# The PC's load during a run (config.load, `mmrig run --load`), in the order figures and tables list them,
# defined once (mmsched.model.load takes them from here). "heavy" is the paper's section 7.5 mix (cpu + memory +
# disk), what the former `--load` switch ran; "all" adds the network. A sidecar written before named loads has
# a bool there: true reads as "heavy" (what it ran), false as "idle".
LOAD_CONDITIONS = ("idle", "cpu", "memory", "disk", "network", "heavy", "all")


def load_condition(value: object) -> str:
    """A run's load condition from its config.load: a name, or the older bool (true: heavy, false/absent:
    idle). A name this version does not know is kept as it is."""
    if value is None or value is False:
        return "idle"
    if value is True:
        return "heavy"
    return str(value)


class SchemaError(ValueError):
    """A run file does not follow docs/data-format.md. Names the file, the line (1 = header) and the column."""

    def __init__(self, file: str, message: str, line: int | None = None, column: str | None = None):
        self.file, self.line, self.column, self.detail = str(file), line, column, message
        where = str(file)
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")

# Why a run is invalid: the sidecar's `invalid_reasons` is a list of {"code", "text"}; `code` is one of
# these, and every view (GUI, report, demo) says it in these words. `text` holds the run's own details.
INVALID_REASONS: dict[str, tuple[str, str]] = {
    # code: (title, what it means and what to do)
    "port_error": ("Serial port error", "A serial port could not be opened or failed. Check the port name, the "
                   "cable and that no other program holds the port."),
    "no_hello": ("Node does not answer", "No HELLO from a node: check the port, the cable, the baud rate and that "
                 "the board is flashed and powered."),
    "protocol_version": ("Version mismatch", "A node speaks another protocol version than this scheduler. Rebuild "
                         "and flash the firmware of this checkout (make build, make flash-*)."),
    "node_kind": ("Ports swapped?", "The profiler port answered as the executor (or the other way round). Swap "
                  "the two ports."),
    "incomplete": ("Run not written", "The run's files could not be written at its end (a full disk, a folder that "
                   "went away) or its process was killed: these are the events from its journal (NAME.partial.csv), "
                   "each as it ended, without the end's checks. Kept, never a result."),
    "interrupted": ("Run interrupted", "The run was stopped by a signal (SIGTERM, SIGHUP: a closed terminal, a "
                    "CI timeout). The events up to then are kept on disk, but the run is not a result."),
    "bad_hello": ("Profiler reports a nonsense clock", "The profiler's HELLO gives a timer rate, tick or baud "
                  "no run can be measured with (zero or absurd). Rebuild and flash the profiler of this checkout."),
    "line_budget": ("Schedule faster than the line", "The nodes' serial line cannot carry the run's events: a "
                    "RESULT per event (18 bytes) at the links' rate. Run the links faster (--baud 500000 carries "
                    "about 2,500 events a second) or the events slower (--rate)."),
    "setup": ("Node did not set up", "A node answered HELLO but not the run's set-up (no TIMECODE from the "
              "profiler, or no STATUS from the executor after MODE)."),
    "link_fault": ("Connection lost", "A serial port went away or fell silent during the run (board unplugged, or "
                   "the virtual bench died). The events in flight were counted as lost."),
    "node_reset": ("A node reset", "A node said HELLO again in the middle of the run (a reset: power, its reset "
                   "pin, its watchdog; the text says which) or its timecode went back. The events in flight were "
                   "counted as lost, not as misses of the system under test."),
    "timecode_fault": ("Timecode fault", "The nodes disagreed on the tick (the executor's timecode input glitched "
                       "or a wire is stuck or loose). The events it touched were counted as lost."),
    "no_answer": ("Requests went unanswered", "A SCHEDULE or FIRE frame got no answer: it or its answer was "
                  "lost on the line (noise, a cut, a node that stopped reading). Those events were counted as lost."),
    "injected_delay": ("The bench delayed the PC's frames", "A delay injected on the virtual bench (`fault NODE in "
                       "delay`: a fault campaign's, a test's, a user's) held back a SCHEDULE or FIRE frame on its "
                       "way to the node. The events it held were counted as lost, not as misses of the system under "
                       "test; the text says how many and by how much."),
    "link_errors": ("Frames lost on a line", "The scheduler received garbled frames or missed some (sequence "
                    "gaps): check cables, grounds and the baud rate. The events they may have carried were "
                    "counted as lost."),
    "node_errors": ("A node counted faults", "A node's own fault counters rose during the run (frames it "
                    "received garbled, input bytes it lost, results it could not keep). The text names them."),
    "lockstep_normal": ("Normal mode needs a paced run", "Normal mode measures the PC's own timing against wall "
                        "time; in lockstep the PC is never late by construction. Run it on the paced bench."),
    "bench_failed": ("Virtual bench failed", "The virtual bench could not start or stopped during the run."),
    "bench_lag": ("Bench fell behind", "Host stalls of the virtual bench displaced bytes that more than 5 % of the "
                  "events depend on past the bound (validity by cause), so this run is "
                  "kept on disk but is not a result. Close other programs and run again."),
    "bench_status": ("Bench status unavailable", "The bench's lag over the run could not be read, so the run "
                     "cannot be shown to be trustworthy."),
    "run_timeout": ("Run did not finish", "The run did not end in twice its expected time."),
    "invariant": ("Accounting error", "Not every created event ended in exactly one row: a bug of the rig."),
    "load_unavailable": ("PC load unavailable", "The run's PC load could not be started: stress-ng is not installed, "
                                                "or (network, all) no network namespace of its own could be made "
                                                "(unshare, ip: make setup installs them)."),
}

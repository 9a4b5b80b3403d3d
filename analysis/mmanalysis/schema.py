"""The run data format (docs/data-format.md, version 1), as the loader checks it."""

from __future__ import annotations

FORMAT = "mmrig-run"
FORMAT_VERSION = 1

# (column, kind, nullable) in the order docs/data-format.md lists them.
# kind: "int" -> nullable Int64, "float" -> float64, "str" -> categorical or string.
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("event", "int", False),
    ("tag", "int", False),
    ("event_id", "int", False),
    ("mode", "str", False),
    ("distance", "int", False),
    ("scheduled_tc", "int", False),
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
)
COLUMN_NAMES = tuple(c for c, _, _ in COLUMNS)

OUTCOMES = ("ok", "late", "early", "missed", "lost")
MEASURED = ("ok", "late")  # latency statistics are over these rows only
MODES = ("mixed", "normal", "verification")
REASONS = ("late", "early", "past_due", "duplicate", "list_full", "bad_value", "timeout", "seq_gap", "link_fault")

DEFAULT_LATE_BOUND_US = 1000.0


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

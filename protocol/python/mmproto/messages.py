"""Typed messages of the mmrig protocol, one dataclass per type in protocol/SPEC.md section 5.

Each class lists its fields in wire order with their widths; packing and unpacking is derived from that
list, and a test checks the list against the tables in SPEC.md.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import astuple, dataclass, fields
from typing import ClassVar

from .framing import HEADER_LEN, encode_frame

PROTO_VERSION = 6

_STRUCT_CODE = {"u8": "B", "u16": "H", "u32": "I"}
_LIMIT = {"u8": 0xFF, "u16": 0xFFFF, "u32": 0xFFFFFFFF}


class NodeKind(enum.IntEnum):
    PROFILER = 1
    EXECUTOR = 2
    SCHEDULER = 3


class ErrorCode(enum.IntEnum):
    DUPLICATE = 1
    LIST_FULL = 2
    PAST_DUE = 3
    BAD_MODE = 4
    UNKNOWN_TYPE = 5
    BAD_LENGTH = 6
    BAD_VALUE = 7
    OVERFLOW = 8
    HORIZON = 9


class ResetCause(enum.IntFlag):
    """HELLO.reset_cause bits: why the node last reset (the AVR's MCUSR bits; 0 = the node cannot tell)."""
    POWER_ON = 0x01
    EXTERNAL = 0x02
    BROWN_OUT = 0x04
    WATCHDOG = 0x08
    JTAG = 0x10

    @staticmethod
    def words(cause: int) -> str:
        """The bits in words ("external, watchdog"); 0: "not told" (a node that cannot tell)."""
        names = [c.name.lower().replace("_", "-") for c in ResetCause if cause & c]
        return ", ".join(names) if names else "not told"


def fw_version_text(fw_version: int) -> str:
    """HELLO.fw_version (major * 256 + minor) as people write it: "3.0"."""
    return f"{fw_version >> 8}.{fw_version & 0xFF}"


class ExecutorMode(enum.IntEnum):
    IDLE = 0
    VERIFICATION = 1
    MIXED = 2


class Dispatch(enum.IntEnum):
    ISR = 0
    TASK = 1


# MODE's executor load (version 3): the limits the executor checks (else ERROR BAD_VALUE, nothing changes)
LOAD_PERIOD_MIN_US = 1000  # periodic_period_us is 0 (no periodic task) or at least this


def load_error(cpu_load: int, periodic_period_us: int, periodic_exec_us: int) -> str | None:
    """Why the executor would refuse this load with ERROR BAD_VALUE, or None if it accepts it."""
    if cpu_load not in (0, 1):
        return f"cpu_load {cpu_load}: 0 or 1"
    if 0 < periodic_period_us < LOAD_PERIOD_MIN_US:
        return f"periodic_period_us {periodic_period_us}: 0 or {LOAD_PERIOD_MIN_US}..65535"
    if 2 * periodic_exec_us > periodic_period_us:
        return f"periodic_exec_us {periodic_exec_us}: at most half the period ({periodic_period_us // 2})"
    return None


HELLO_FLAG_CAPTURE = 0x01
HELLO_FLAG_POLLED = 0x02
HELLO_FLAG_8051 = 0x04
HELLO_FLAG_HIST = 0x08      # version 6: the profiler keeps histograms (HIST_ARM)
# the profiler targets (HELLO flags bit 2 tells them apart): the bench's `profiler_kind`, the runs' sidecars and
# every option that chooses one take their names from here, in this order (avr first: the default)
PROFILER_KINDS = ("avr", "8051")
CANCEL_ALL = 0x01
# The executor refuses a SCHEDULE more than this many ticks ahead of its timecode (ERROR HORIZON): an
# event so far out is a host bug or a corrupted field, and 16 of them would hold the list for good.
SCHEDULE_HORIZON_TICKS = 1 << 15
RESULT_FLAG_FIRE = 0x01
RESULT_FLAG_LOST_BEFORE = 0x02
RESULT_FLAG_STROBE = 0x04


class MessageError(ValueError):
    """A frame that passed the CRC but is not a valid message of this protocol version."""


class UnknownType(MessageError):
    pass


class BadLength(MessageError):
    pass


@dataclass(frozen=True)
class Message:
    TYPE: ClassVar[int]
    FIELDS: ClassVar[tuple[tuple[str, str], ...]]

    @classmethod
    def struct(cls) -> struct.Struct:
        return struct.Struct("<" + "".join(_STRUCT_CODE[kind] for _, kind in cls.FIELDS))

    @classmethod
    def body_len(cls) -> int:
        return cls.struct().size

    def __post_init__(self) -> None:
        for (name, kind), f in zip(self.FIELDS, fields(self)):
            assert name == f.name, f"{type(self).__name__}: FIELDS and dataclass fields disagree"
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= _LIMIT[kind]:
                raise ValueError(f"{type(self).__name__}.{name}={value!r} does not fit {kind}")

    def body(self) -> bytes:
        return self.struct().pack(*astuple(self))

    def payload(self, seq: int) -> bytes:
        if not 0 <= seq <= 0xFF:
            raise ValueError(f"seq {seq} does not fit u8")
        return bytes((self.TYPE, seq)) + self.body()

    def wire(self, seq: int) -> bytes:
        """The bytes a sender writes to the line for this message."""
        return encode_frame(self.payload(seq))


@dataclass(frozen=True)
class Hello(Message):
    TYPE = 0x01
    FIELDS = (("proto_version", "u8"), ("node_kind", "u8"), ("fw_version", "u16"), ("cpu_hz", "u32"),
              ("timer_hz", "u32"), ("tick_counts", "u32"), ("baud", "u32"), ("flags", "u8"), ("reset_cause", "u8"))
    proto_version: int
    node_kind: int
    fw_version: int
    cpu_hz: int
    timer_hz: int
    tick_counts: int
    baud: int
    flags: int
    reset_cause: int


@dataclass(frozen=True)
class Query(Message):
    TYPE = 0x02
    FIELDS = (("what", "u8"),)
    what: int


@dataclass(frozen=True)
class Error(Message):
    TYPE = 0x03
    FIELDS = (("code", "u8"), ("ref_type", "u8"), ("ref_tag", "u16"), ("timecode", "u32"))
    code: int
    ref_type: int
    ref_tag: int
    timecode: int


@dataclass(frozen=True)
class Counters(Message):
    TYPE = 0x04
    FIELDS = tuple((name, "u16") for name in (
        "rx_ok", "rx_bad_crc", "rx_bad_cobs", "rx_too_long", "rx_too_short", "rx_bad_message",
        "tx_dropped", "node_a", "node_b", "node_c", "node_d", "rx_ring_overflow", "rx_hw_overrun"))
    rx_ok: int
    rx_bad_crc: int
    rx_bad_cobs: int
    rx_too_long: int
    rx_too_short: int
    rx_bad_message: int
    tx_dropped: int
    node_a: int
    node_b: int
    node_c: int
    node_d: int
    rx_ring_overflow: int
    rx_hw_overrun: int


@dataclass(frozen=True)
class Timecode(Message):
    TYPE = 0x10
    FIELDS = (("timecode", "u32"),)
    timecode: int


@dataclass(frozen=True)
class Result(Message):
    TYPE = 0x11
    FIELDS = (("event_id", "u8"), ("flags", "u8"), ("tag", "u16"), ("timecode", "u32"), ("counts", "u32"))
    event_id: int
    flags: int
    tag: int
    timecode: int
    counts: int


@dataclass(frozen=True)
class Fire(Message):
    TYPE = 0x12
    FIELDS = (("event_id", "u8"), ("tag", "u16"))
    event_id: int
    tag: int


@dataclass(frozen=True)
class Schedule(Message):
    TYPE = 0x20
    FIELDS = (("tag", "u16"), ("event_id", "u8"), ("timecode", "u32"))
    tag: int
    event_id: int
    timecode: int


@dataclass(frozen=True)
class Ack(Message):
    TYPE = 0x21
    FIELDS = (("tag", "u16"), ("event_id", "u8"), ("timecode", "u32"), ("phase", "u16"), ("pending", "u8"))
    tag: int
    event_id: int
    timecode: int
    phase: int
    pending: int


@dataclass(frozen=True)
class Mode(Message):
    TYPE = 0x22
    FIELDS = (("mode", "u8"), ("dispatch", "u8"), ("distance", "u8"), ("period", "u16"), ("random_ids", "u8"),
              ("cpu_load", "u8"), ("periodic_period_us", "u16"), ("periodic_exec_us", "u16"))
    mode: int
    dispatch: int
    distance: int
    period: int
    random_ids: int
    # version 3: the executor's load (SPEC.md MODE); the defaults are "no load"
    cpu_load: int = 0
    periodic_period_us: int = 0
    periodic_exec_us: int = 0


@dataclass(frozen=True)
class Status(Message):
    TYPE = 0x23
    FIELDS = (("mode", "u8"), ("dispatch", "u8"), ("timecode", "u32"), ("pending", "u8"), ("capacity", "u8"),
              ("fired", "u32"), ("stack_timecode", "u16"), ("stack_serial", "u16"), ("stack_status", "u16"),
              ("cpu_load", "u8"), ("periodic_period_us", "u16"), ("periodic_exec_us", "u16"), ("cpu_loops", "u32"),
              ("periodic_runs", "u32"), ("periodic_overruns", "u16"))
    mode: int
    dispatch: int
    timecode: int
    pending: int
    capacity: int
    fired: int
    stack_timecode: int
    stack_serial: int
    stack_status: int
    # version 3: the load in force (as MODE set it) and what it did since reset; the defaults are "no load"
    cpu_load: int = 0
    periodic_period_us: int = 0
    periodic_exec_us: int = 0
    cpu_loops: int = 0
    periodic_runs: int = 0
    periodic_overruns: int = 0


@dataclass(frozen=True)
class LocalEvent(Message):
    TYPE = 0x24
    FIELDS = (("tag", "u16"), ("event_id", "u8"), ("timecode", "u32"))
    tag: int
    event_id: int
    timecode: int


@dataclass(frozen=True)
class Fired(Message):
    TYPE = 0x25
    FIELDS = (("tag", "u16"), ("event_id", "u8"), ("timecode", "u32"))
    tag: int
    event_id: int
    timecode: int


@dataclass(frozen=True)
class Cancel(Message):
    TYPE = 0x26
    FIELDS = (("tag", "u16"), ("flags", "u8"))
    tag: int
    flags: int


@dataclass(frozen=True)
class Cancelled(Message):
    TYPE = 0x27
    FIELDS = (("tag", "u16"), ("removed", "u8"), ("pending", "u8"))
    tag: int
    removed: int
    pending: int


@dataclass(frozen=True)
class Periodic(Message):
    """Request (version 5): a series of `count` events at moments inside ticks, `period` profiler counts apart
    from `first` counts into tick `timecode` (the executor's); event k has tag + k and id (event_id + k) mod 8.
    The executor places each moment by its fraction of the tick it measures itself (SPEC.md PERIODIC).
    `flags` (version 6): FLAG_QUIET, a FIRED for the series' last event only, so that a kilohertz series fits
    a 115200-baud line (13 bytes a FIRED: 886 FIREDs/s at most); other bits 0."""
    TYPE = 0x28
    FIELDS = (("tag", "u16"), ("event_id", "u8"), ("timecode", "u32"), ("first", "u32"), ("period", "u32"),
              ("tick_counts", "u32"), ("count", "u16"), ("flags", "u8"))
    tag: int
    event_id: int
    timecode: int
    first: int
    period: int
    tick_counts: int
    count: int
    flags: int = 0

    FLAG_QUIET: ClassVar[int] = 0x01


@dataclass(frozen=True)
class Nop(Message):
    """Filler (version 3): the scheduler sends it to the executor as receive load (--executor-load rx=N); a
    node decodes it, counts it in rx_ok and drops it, never answering."""
    TYPE = 0x05
    FIELDS = (("fill", "u8"),)
    fill: int = 0


@dataclass(frozen=True)
class Baud(Message):
    """Request (version 4): run the link at another baud rate. In units of 100 baud so that the profilers'
    7-byte decode buffers hold the frame. The node answers with HELLO at the new rate (or ERROR BAD_VALUE
    at the old one when its UART cannot make it); after a reset it runs at its build-time rate again."""
    TYPE = 0x06
    FIELDS = (("baud_hundreds", "u16"),)
    baud_hundreds: int

    @classmethod
    def of(cls, baud: int) -> "Baud":
        if baud % 100 or not 0 < baud // 100 <= 0xFFFF:
            raise ValueError(f"a BAUD request carries a rate in hundreds of baud (100 .. 6553500), not {baud}")
        return cls(baud // 100)

    @property
    def baud(self) -> int:
        return self.baud_hundreds * 100


@dataclass(frozen=True)
class HistArm(Message):
    """Request to the profiler (version 6): keep a latency histogram of a series of `count` events due
    `period` counts apart from `first` counts into its tick `timecode` (0 ends the series running); answered
    by a HistSummary (SPEC.md HIST_ARM)."""
    TYPE = 0x13
    FIELDS = (("timecode", "u32"), ("first", "u32"), ("period", "u32"), ("count", "u32"), ("late", "u32"),
              ("early", "u16"), ("event_id", "u8"), ("cell_shift", "u8"), ("report_ticks", "u8"), ("flags", "u8"))
    timecode: int
    first: int
    period: int
    count: int
    late: int
    early: int
    event_id: int
    cell_shift: int
    report_ticks: int
    flags: int = 0

    FLAG_RAW: ClassVar[int] = 0x01


@dataclass(frozen=True)
class HistSummary(Message):
    """The profiler's histogram report's last frame (version 6): cumulative counts per outcome, min/max/sum of
    the ok and late latencies in counts, the worst event's index, and the HIST_CELLS frames sent before it."""
    TYPE = 0x14
    FIELDS = (("report", "u16"), ("flags", "u8"), ("ok", "u32"), ("late", "u32"), ("early", "u32"),
              ("missed", "u32"), ("stray", "u16"), ("min", "u32"), ("max", "u32"), ("worst", "u32"),
              ("sum_lo", "u32"), ("sum_hi", "u16"), ("blocks", "u8"))
    report: int
    flags: int
    ok: int
    late: int
    early: int
    missed: int
    stray: int
    min: int
    max: int
    worst: int
    sum_lo: int
    sum_hi: int
    blocks: int

    FLAG_ARMED: ClassVar[int] = 0x01
    FLAG_FINAL: ClassVar[int] = 0x02
    NO_MIN: ClassVar[int] = 0xFFFFFFFF

    @property
    def sum(self) -> int:
        return self.sum_hi << 32 | self.sum_lo


@dataclass(frozen=True)
class HistCells(Message):
    """Eight consecutive histogram cells' cumulative counts (version 6), cells `cell` .. `cell + 7`."""
    TYPE = 0x15
    FIELDS = (("report", "u16"), ("cell", "u16")) + tuple((f"c{i}", "u32") for i in range(8))
    report: int
    cell: int
    c0: int
    c1: int
    c2: int
    c3: int
    c4: int
    c5: int
    c6: int
    c7: int

    BLOCK: ClassVar[int] = 8
    CELLS: ClassVar[int] = 1000       # cells 0 .. 999; cell 1000 is the overflow cell

    @property
    def counts(self) -> tuple[int, ...]:
        return (self.c0, self.c1, self.c2, self.c3, self.c4, self.c5, self.c6, self.c7)


MESSAGE_TYPES: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (Hello, Query, Error, Counters, Timecode, Result, Fire, Schedule, Ack, Mode, Status,
                LocalEvent, Fired, Cancel, Cancelled, Nop, Baud, Periodic, HistArm, HistSummary, HistCells)
}

# Names as SPEC.md writes them (upper case, words joined by underscores).
SPEC_NAMES: dict[type[Message], str] = {
    Hello: "HELLO", Query: "QUERY", Error: "ERROR", Counters: "COUNTERS", Timecode: "TIMECODE",
    Result: "RESULT", Fire: "FIRE", Schedule: "SCHEDULE", Ack: "ACK", Mode: "MODE", Status: "STATUS",
    LocalEvent: "LOCAL_EVENT", Fired: "FIRED", Cancel: "CANCEL", Cancelled: "CANCELLED", Nop: "NOP", Baud: "BAUD",
    Periodic: "PERIODIC", HistArm: "HIST_ARM", HistSummary: "HIST_SUMMARY", HistCells: "HIST_CELLS",
}


def parse_payload(payload: bytes) -> tuple[int, Message]:
    """(seq, message) from a payload that passed the frame checks; raises UnknownType or BadLength."""
    if len(payload) < HEADER_LEN:
        raise BadLength(f"payload of {len(payload)} bytes has no header")
    msg_type, seq, body = payload[0], payload[1], payload[HEADER_LEN:]
    cls = MESSAGE_TYPES.get(msg_type)
    if cls is None:
        raise UnknownType(f"unknown message type 0x{msg_type:02X}")
    layout = cls.struct()
    if len(body) != layout.size:
        raise BadLength(f"{SPEC_NAMES[cls]} body of {len(body)} bytes, expected {layout.size}")
    return seq, cls(*layout.unpack(body))

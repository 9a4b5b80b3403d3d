"""A run's record of its inputs (`NAME.inputs`, docs/data-format.md): the bytes the PC sent each node, each read
of them with the virtual cycle it entered the node's line at and the rate the PC had set on the port, the images'
hashes and the bench's options. Given it, the bench computes the run again, cycle for cycle, with no PC in the
loop (`mmrig replay`). Written by the scheduler at the end of a run; read here, by every side.

The file's first line is text: `#mmrig-inputs 1 ` and the header as one JSON object, then a newline. Then one
binary record per read of the bench's stamping thread (a frame, part of one, or several), in cycle order:

    varint  the cycles since the record before (the first: since cycle 0)
    byte    bit 0: the node (0 profiler, 1 executor); bit 1: a rate follows
    varint  (bit 1 only) the rate the PC had set on its port from this read on (0: the bench's own --baud)
    varint  the number of bytes, then the bytes

(varint: LEB128, 7 bits a byte, low first.) A rate is written for a node's first read and whenever it changes. A
frame costs its bytes and 4 to 6 more: about 13 bytes for a FIRE.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .safefiles import atomic_write

MAGIC = "#mmrig-inputs"
VERSION = 1
NODES = ("profiler", "executor")


class InputRecordError(ValueError):
    """A record that cannot be read: the message names the file, the line and the field."""


@dataclass(frozen=True)
class InputRead:
    cycle: int
    node: str
    baud: int
    data: bytes


@dataclass
class InputRecord:
    header: dict[str, Any]
    reads: list[InputRead] = field(default_factory=list)

    @property
    def last_cycle(self) -> int:
        return max((r.cycle for r in self.reads), default=0)


@dataclass(frozen=True)
class BenchRead:
    """One read of the paced bench's stamping thread as its `timing` reply gives it: node, the generation of the
    host stream it came in on (a line socket's connection, or the pty: the link's `generation`), the offset of its
    first byte in what the PC wrote into that stream, its length, the cycle its bytes were queued at and the port's
    rate then."""

    node: str
    gen: int
    offset: int
    n: int
    cycle: int
    baud: int


def join(entries: Iterable[BenchRead], written: Mapping[str, Mapping[int, bytes]]) -> tuple[list[InputRead], int]:
    """The reads with their bytes (what each link wrote into that stream, at that offset), in cycle order, and how
    many reads had bytes the links do not hold (a record that is then incomplete)."""
    reads, missing = [], 0
    for e in entries:
        data = bytes(written.get(e.node, {}).get(e.gen, b"")[e.offset:e.offset + e.n])
        if len(data) != e.n:
            missing += 1
            continue
        reads.append(InputRead(e.cycle, e.node, e.baud, data))
    reads.sort(key=lambda r: (r.cycle, NODES.index(r.node) if r.node in NODES else 9))
    return reads, missing


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


@dataclass(frozen=True)
class Written:
    """What a record file holds, for the run's sidecar to vouch for it (`size` bytes, their `sha256`, `reads`):
    a replay refuses a record that does not match (`check`)."""

    size: int
    sha256: str
    reads: int


def write(path: Path, record: InputRecord) -> Written:
    """PATH written as every file of ours is (safefiles.atomic_write: never through a planted link or into a
    FIFO); what it holds."""
    out = bytearray(f"{MAGIC} {VERSION} {json.dumps(record.header, sort_keys=True, separators=(',', ':'))}\n"
                    .encode())
    prev, rate = 0, {}
    for r in record.reads:
        node = NODES.index(r.node)
        tag = node | (2 if rate.get(node) != r.baud else 0)
        out += _varint(r.cycle - prev) + bytes([tag])
        if tag & 2:
            out += _varint(r.baud)
            rate[node] = r.baud
        out += _varint(len(r.data)) + r.data
        prev = r.cycle
    atomic_write(Path(path), bytes(out))
    return Written(len(out), hashlib.sha256(out).hexdigest(), len(record.reads))


def check(path: Path, data: bytes, section: Mapping[str, Any]) -> None:
    """DATA, the bytes of the record PATH, against what the run's sidecar section (`inputs`, `pc_inputs`) says
    it wrote: its size and SHA-256 (a run that predates them: not checked). InputRecordError, one line, for a
    record that is damaged, cut or another run's."""
    size, digest = section.get("size"), section.get("sha256")
    if size is not None and len(data) != size:
        raise InputRecordError(f"{path}: {len(data)} bytes, the run's sidecar says it wrote {size}: the record is "
                               "cut, grown or another run's; not replayed")
    if digest is not None and hashlib.sha256(data).hexdigest() != str(digest).lower():
        raise InputRecordError(f"{path}: its SHA-256 is not the one the run's sidecar holds: the record is damaged "
                               "or another run's; not replayed")


class _Body:
    """The binary records after the header, read one field at a time (InputRecordError names the record)."""

    def __init__(self, path: Path, data: bytes, at: int) -> None:
        self.path, self.data, self.at, self.record = path, data, at, 0

    def fail(self, what: str) -> InputRecordError:
        return InputRecordError(f"{self.path}: record {self.record} (byte {self.at}): {what}")

    def varint(self, field_name: str) -> int:
        n = shift = 0
        while True:
            if self.at >= len(self.data):
                raise self.fail(f"{field_name}: the file ends inside it")
            b = self.data[self.at]
            self.at += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n
            if shift > 63:
                raise self.fail(f"{field_name}: more than 64 bits")

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise self.fail(f"BYTES: {n} announced, {len(self.data) - self.at} left")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out


def read(path: Path, section: Mapping[str, Any] | None = None) -> InputRecord:
    """The record in `path`; InputRecordError naming the record and the field for anything else. With the run's
    sidecar SECTION the file is first checked against it (`check`), and so is the number of reads it holds."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputRecordError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if section is not None:
        check(p, data, section)
    record = parse(p, data)
    want = None if section is None else section.get("reads", section.get("writes"))
    if want is not None and len(record.reads) != want:
        raise InputRecordError(f"{p}: {len(record.reads)} reads, the run's sidecar says it wrote {want}: the "
                               "record is cut or another run's; not replayed")
    return record


def parse(p: Path, data: bytes) -> InputRecord:
    """The record in DATA, the bytes of the file P (named in the errors)."""
    end = data.find(b"\n")
    first = data[:end if end >= 0 else len(data)].decode("utf-8", "replace")
    if not first.startswith(MAGIC + " "):
        raise InputRecordError(f"{p}:1: not an mmrig input record (it starts with {MAGIC})")
    try:
        version, header_text = first[len(MAGIC) + 1:].split(" ", 1)
        if int(version) != VERSION:
            raise InputRecordError(f"{p}:1: version {version}, this mmrig reads {VERSION}")
        header = json.loads(header_text)
        if not isinstance(header, dict):
            raise ValueError("not a JSON object")
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, InputRecordError):
            raise
        raise InputRecordError(f"{p}:1: header: {exc}") from None
    body = _Body(p, data, end + 1 if end >= 0 else len(data))
    reads, cycle, rate = [], 0, {0: 0, 1: 0}
    while body.at < len(data):
        body.record += 1
        cycle += body.varint("CYCLES")
        if body.at >= len(data):
            raise body.fail("NODE: the file ends before it")
        tag = data[body.at]
        body.at += 1
        if tag & ~3:
            raise body.fail(f"NODE: byte 0x{tag:02x}, want bits 0 and 1 only")
        if tag & 2:
            rate[tag & 1] = body.varint("BAUD")
        reads.append(InputRead(cycle, NODES[tag & 1], rate[tag & 1], body.take(body.varint("LENGTH"))))
    return InputRecord(header, reads)


__all__ = ["BenchRead", "InputRead", "InputRecord", "InputRecordError", "Written", "check", "join", "parse", "read",
           "write"]

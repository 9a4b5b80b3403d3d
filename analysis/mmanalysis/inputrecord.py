"""A run's record of its inputs (`NAME.inputs`, docs/data-format.md): the bytes the PC sent each node, each read
of them with the virtual cycle it entered the node's line at and the rate the PC had set on the port, the images'
hashes and the bench's options. Given it, the bench computes the run again, cycle for cycle, with no PC in the
loop (`mmrig replay`). Written by the scheduler at the end of a paced bench run; read here, by every side.

The file is text. Its first line is `#mmrig-inputs 1 ` and the header as one JSON object; then one line per read
of the bench's stamping thread (a frame, part of one, or several):

    CYCLE NODE BAUD HEX

CYCLE the global cycle (16 MHz) the read's first byte reached the line (its bytes follow one another at BAUD),
NODE `profiler` or `executor`, BAUD the rate the PC had set on its port when it wrote them (0: the bench's
own --baud), HEX the bytes. About 30 bytes of file per frame the PC sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

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
    """One read of the paced bench's stamping thread as its `timing` reply gives it: node, pty generation (the
    link's open), the offset of its first byte in what the PC wrote since that open, its length, the cycle its
    bytes were queued at and the port's rate then."""

    node: str
    gen: int
    offset: int
    n: int
    cycle: int
    baud: int


def join(entries: Iterable[BenchRead], written: Mapping[str, Mapping[int, bytes]]) -> tuple[list[InputRead], int]:
    """The reads with their bytes (what each link wrote since that open, at that offset), in cycle order, and how
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


def write(path: Path, record: InputRecord) -> None:
    lines = [f"{MAGIC} {VERSION} {json.dumps(record.header, sort_keys=True, separators=(',', ':'))}"]
    lines += [f"{r.cycle} {r.node} {r.baud} {r.data.hex()}" for r in record.reads]
    Path(path).write_text("\n".join(lines) + "\n")


def read(path: Path) -> InputRecord:
    """The record in `path`; InputRecordError naming the line and the field for anything else."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise InputRecordError(f"{p}: cannot read: {exc.strerror or exc}") from None
    rows = text.splitlines()
    if not rows or not rows[0].startswith(MAGIC + " "):
        raise InputRecordError(f"{p}:1: not an mmrig input record (it starts with {MAGIC})")
    try:
        version, header_text = rows[0][len(MAGIC) + 1:].split(" ", 1)
        if int(version) != VERSION:
            raise InputRecordError(f"{p}:1: version {version}, this mmrig reads {VERSION}")
        header = json.loads(header_text)
    except (ValueError, json.JSONDecodeError) as exc:
        if isinstance(exc, InputRecordError):
            raise
        raise InputRecordError(f"{p}:1: header: {exc}") from None
    reads = []
    for i, row in enumerate(rows[1:], start=2):
        parts = row.split()
        if len(parts) != 4:
            raise InputRecordError(f"{p}:{i}: {len(parts)} fields, want CYCLE NODE BAUD HEX")
        cycle, node, baud, data = parts
        if node not in NODES:
            raise InputRecordError(f"{p}:{i}: node {node!r}, want profiler or executor")
        try:
            reads.append(InputRead(int(cycle), node, int(baud), bytes.fromhex(data)))
        except ValueError as exc:
            field_name = "CYCLE" if not cycle.isdigit() else "BAUD" if not baud.isdigit() else "HEX"
            raise InputRecordError(f"{p}:{i}: {field_name}: {exc}") from None
    return InputRecord(header, reads)


__all__ = ["BenchRead", "InputRead", "InputRecord", "InputRecordError", "join", "read", "write"]

"""Reader and writer of the shared test-vector files (protocol/SPEC.md section 9)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

COUNTER_NAMES = ("frames_ok", "bad_crc", "bad_cobs", "too_long", "too_short", "unknown_type", "bad_length",
                 "seq_lost", "bytes_dropped")


class VectorFileError(ValueError):
    def __init__(self, path: Path, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")


@dataclass
class CrcVector:
    name: str
    data: bytes = b""
    crc: int = 0


@dataclass
class CobsVector:
    name: str
    data: bytes = b""
    encoded: bytes = b""


@dataclass
class MessageVector:
    name: str
    type: int = 0
    type_name: str = ""
    seq: int = 0
    fields: list[tuple[str, str, int]] = field(default_factory=list)
    payload: bytes = b""
    crc: int = 0
    wire: bytes = b""


@dataclass
class StreamVector:
    name: str
    input: bytes = b""
    frames: list[bytes] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)


Vector = CrcVector | CobsVector | MessageVector | StreamVector
_KINDS: dict[str, type] = {"crc": CrcVector, "cobs": CobsVector, "message": MessageVector, "stream": StreamVector}


def hex_bytes(text: str) -> bytes:
    return b"" if text.strip() == "-" else bytes.fromhex(text)


def to_hex(data: bytes) -> str:
    return data.hex(" ").upper() if data else "-"


def read(path: Path) -> list[Vector]:
    vectors: list[Vector] = []
    current: Vector | None = None
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, rest = line.partition(" ")
        try:
            if current is None:
                if key not in _KINDS:
                    raise ValueError(f"expected one of {sorted(_KINDS)}, got {key!r}")
                current = _KINDS[key](rest.strip())
            elif key == "end":
                vectors.append(current)
                current = None
            elif isinstance(current, CrcVector) and key in ("data", "crc"):
                if key == "data":
                    current.data = hex_bytes(rest)
                else:
                    current.crc = int(rest, 16)
            elif isinstance(current, CobsVector) and key in ("data", "encoded"):
                setattr(current, key, hex_bytes(rest))
            elif isinstance(current, MessageVector) and key == "type":
                code, name = rest.split()
                current.type, current.type_name = int(code, 16), name
            elif isinstance(current, MessageVector) and key == "seq":
                current.seq = int(rest)
            elif isinstance(current, MessageVector) and key == "field":
                name, kind, value = rest.split()
                current.fields.append((name, kind, int(value)))
            elif isinstance(current, MessageVector) and key in ("payload", "wire"):
                setattr(current, key, hex_bytes(rest))
            elif isinstance(current, MessageVector) and key == "crc":
                current.crc = int(rest, 16)
            elif isinstance(current, StreamVector) and key == "input":
                current.input += hex_bytes(rest)
            elif isinstance(current, StreamVector) and key == "frame":
                current.frames.append(hex_bytes(rest))
            elif isinstance(current, StreamVector) and key == "counters":
                for item in rest.split():
                    name, value = item.split("=")
                    if name not in COUNTER_NAMES:
                        raise ValueError(f"unknown counter {name!r}")
                    current.counters[name] = int(value)
            else:
                raise ValueError(f"unexpected {key!r} in a {type(current).__name__}")
        except ValueError as exc:
            raise VectorFileError(path, number, str(exc)) from exc
    if current is not None:
        raise VectorFileError(path, number, f"record {current.name!r} has no 'end'")
    return vectors


def _chunks(data: bytes, size: int = 32) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


def format_vector(vector: Vector) -> str:
    """The text of one record, as `read` parses it."""
    kind = next(k for k, cls in _KINDS.items() if isinstance(vector, cls))
    lines = [f"{kind} {vector.name}"]
    if isinstance(vector, CrcVector):
        lines += [f"  data {to_hex(vector.data)}", f"  crc {vector.crc:04X}"]
    elif isinstance(vector, CobsVector):
        lines += [f"  data {to_hex(vector.data)}", f"  encoded {to_hex(vector.encoded)}"]
    elif isinstance(vector, MessageVector):
        lines += [f"  type 0x{vector.type:02X} {vector.type_name}", f"  seq {vector.seq}"]
        lines += [f"  field {name} {kind} {value}" for name, kind, value in vector.fields]
        lines += [f"  payload {to_hex(vector.payload)}", f"  crc {vector.crc:04X}", f"  wire {to_hex(vector.wire)}"]
    else:
        lines += [f"  input {to_hex(chunk)}" for chunk in _chunks(vector.input)]
        lines += [f"  frame {to_hex(frame)}" for frame in vector.frames]
        lines.append("  counters " + " ".join(f"{n}={vector.counters.get(n, 0)}" for n in COUNTER_NAMES))
    lines.append("end")
    return "\n".join(lines)


def write(path: Path, header: str, vectors: list[Vector]) -> None:
    text = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    path.write_text(text + "\n" + "\n\n".join(format_vector(v) for v in vectors) + "\n")

"""How many bytes and how much line time each message takes (protocol/SPEC.md section 8)."""

from __future__ import annotations

from .framing import CRC_LEN, HEADER_LEN
from .messages import MESSAGE_TYPES, SPEC_NAMES, Message

BITS_PER_CHAR = 10  # 8N1: start bit, 8 data bits, stop bit
COBS_OVERHEAD = 1  # one code byte: every frame is shorter than 254 bytes
DELIMITER_LEN = 1


def wire_bytes(cls: type[Message]) -> int:
    return HEADER_LEN + cls.body_len() + CRC_LEN + COBS_OVERHEAD + DELIMITER_LEN


def char_time_s(baud: int) -> float:
    return BITS_PER_CHAR / baud


def wire_time_s(cls: type[Message], baud: int) -> float:
    return wire_bytes(cls) * char_time_s(baud)


def markdown_table(bauds: tuple[int, ...] = (9600, 115200)) -> str:
    head = "| message | type | body bytes | wire bytes | " + " | ".join(f"ms at {b} baud" for b in bauds) + " |"
    rows = [head, "|" + "---|" * (4 + len(bauds))]
    for msg_type, cls in sorted(MESSAGE_TYPES.items()):
        times = " | ".join(f"{wire_time_s(cls, b) * 1e3:.3f}" for b in bauds)
        rows.append(f"| {SPEC_NAMES[cls]} | 0x{msg_type:02X} | {cls.body_len()} | {wire_bytes(cls)} | {times} |")
    return "\n".join(rows)

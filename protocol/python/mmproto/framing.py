"""Frame layer of the mmrig protocol: CRC-16/IBM-3740, COBS framing and the streaming decoder.

See protocol/SPEC.md sections 2, 3 and 6. COBS comes from the `cobs` package and the CRC from Python's own
`binascii.crc_hqx` (C code: CRC-16/IBM-3740 is its polynomial 0x1021 from 0xFFFF; the `crc` package checks it in
the tests); what is ours is the frame layout and the classification of every byte sequence a receiver can see.
"""

from __future__ import annotations

import binascii
import enum
from dataclasses import dataclass, field, fields

from cobs import cobs

HEADER_LEN = 2
CRC_LEN = 2
MAX_BODY = 40  # 32 until version 2; version 3's STATUS has 33 body bytes (SPEC.md section 2)
MAX_PAYLOAD = HEADER_LEN + MAX_BODY
MAX_FRAME = MAX_PAYLOAD + CRC_LEN
MAX_ENCODED = MAX_FRAME + 1
MIN_FRAME = HEADER_LEN + CRC_LEN
CRC_NAME = "CRC-16/IBM-3740"
CRC_CHECK = 0x29B1

def crc16(data: bytes) -> int:
    """CRC-16/IBM-3740 of `data` (check value 0x29B1). Safe to call from any thread. C code: the `crc` package's
    table-driven Python took 14 % of a kilohertz run's CPU (every RESULT checked, every FIRE made), which the run's
    loop needs to keep ahead of the firing thread on a busy machine."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(payload: bytes) -> bytes:
    """Everything a sender writes for one payload (header + body): COBS(payload, crc_le) + 0x00."""
    if not HEADER_LEN <= len(payload) <= MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes; must be {HEADER_LEN}..{MAX_PAYLOAD}")
    crc = crc16(payload)
    return cobs.encode(payload + bytes((crc & 0xFF, crc >> 8))) + b"\x00"


class Outcome(enum.Enum):
    """What became of one non-empty encoded frame (SPEC.md section 6), in the order they are checked."""

    TOO_LONG = "too_long"
    BAD_COBS = "bad_cobs"
    TOO_SHORT = "too_short"
    BAD_CRC = "bad_crc"
    UNKNOWN_TYPE = "unknown_type"
    BAD_LENGTH = "bad_length"
    OK = "frames_ok"


def classify_frame(encoded: bytes, max_encoded: int = MAX_ENCODED) -> tuple[Outcome, bytes]:
    """Frame-level outcome of the bytes between two delimiters, and the payload if the frame is ok.

    Message-level checks (unknown type, body length) are left to the message layer.
    """
    if len(encoded) > max_encoded:
        return Outcome.TOO_LONG, b""
    try:
        decoded = cobs.decode(encoded)
    except cobs.DecodeError:
        return Outcome.BAD_COBS, b""
    if len(decoded) < MIN_FRAME:
        return Outcome.TOO_SHORT, b""
    payload, crc_bytes = decoded[:-CRC_LEN], decoded[-CRC_LEN:]
    if crc16(payload) != crc_bytes[0] | (crc_bytes[1] << 8):
        return Outcome.BAD_CRC, b""
    return Outcome.OK, payload


@dataclass
class DecoderCounters:
    """Counters of a receiver, named as in SPEC.md section 6 and the vector files."""

    frames_ok: int = 0
    bad_crc: int = 0
    bad_cobs: int = 0
    too_long: int = 0
    too_short: int = 0
    unknown_type: int = 0
    bad_length: int = 0
    seq_lost: int = 0
    bytes_dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def frames_dropped(self) -> int:
        return self.bad_crc + self.bad_cobs + self.too_long + self.too_short + self.unknown_type + self.bad_length


@dataclass
class FrameSplitter:
    """Cuts a byte stream at delimiters, holding at most `max_encoded + 1` bytes of an unfinished frame.

    A frame that grows past the limit is remembered only by its length, so a flood of garbage with no
    delimiter costs no memory.
    """

    max_encoded: int = MAX_ENCODED
    _pending: bytearray = field(default_factory=bytearray)
    _overflow_len: int = 0

    def feed(self, data: bytes) -> list[tuple[bytes, int]]:
        """Returns (encoded bytes, encoded length) of each frame completed by `data`.

        For a frame longer than the limit the bytes are cut short but the length is the true one.
        """
        done: list[tuple[bytes, int]] = []
        start = 0
        while True:
            end = data.find(b"\x00", start)
            chunk = data[start:] if end < 0 else data[start:end]
            if self._overflow_len:
                self._overflow_len += len(chunk)
            elif len(self._pending) + len(chunk) > self.max_encoded:
                self._overflow_len = len(self._pending) + len(chunk)
                self._pending.clear()
            else:
                self._pending += chunk
            if end < 0:
                return done
            length = self._overflow_len or len(self._pending)
            if length:
                done.append((bytes(self._pending), length))
            self._pending.clear()
            self._overflow_len = 0
            start = end + 1

    @property
    def at_frame_start(self) -> bool:
        return not self._pending and not self._overflow_len

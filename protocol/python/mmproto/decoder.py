"""The receiver: bytes in, typed messages out, every dropped byte and frame counted (SPEC.md section 6)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .framing import MAX_ENCODED, DecoderCounters, FrameSplitter, Outcome, classify_frame
from .messages import BadLength, Hello, Message, UnknownType, parse_payload
from .sequence import SeqTracker


@dataclass(frozen=True)
class Received:
    """One frame that passed every check."""

    seq: int
    message: Message
    payload: bytes
    lost_before: int  # frames lost between the previous accepted frame and this one


@dataclass
class StreamDecoder:
    """Feed it whatever the serial port gave you; it never raises on bad input and holds bounded memory."""

    max_encoded: int = MAX_ENCODED
    counters: DecoderCounters = field(default_factory=DecoderCounters)
    seq: SeqTracker = field(default_factory=SeqTracker)
    _splitter: FrameSplitter = field(init=False)

    def __post_init__(self) -> None:
        self._splitter = FrameSplitter(self.max_encoded)

    @property
    def at_frame_start(self) -> bool:
        """True when the next byte fed would be the first byte of a frame."""
        return self._splitter.at_frame_start

    def feed(self, data: bytes) -> list[Received]:
        out: list[Received] = []
        for encoded, length in self._splitter.feed(data):
            if length > self.max_encoded:  # the splitter kept only its length
                outcome, payload = Outcome.TOO_LONG, b""
            else:
                outcome, payload = classify_frame(encoded, self.max_encoded)
            if outcome is Outcome.OK:
                try:
                    seq, message = parse_payload(payload)
                except UnknownType:
                    outcome = Outcome.UNKNOWN_TYPE
                except BadLength:
                    outcome = Outcome.BAD_LENGTH
                else:
                    lost = self.seq.accept(seq, isinstance(message, Hello))
                    self.counters.seq_lost = self.seq.lost
                    self.counters.frames_ok += 1
                    out.append(Received(seq, message, payload, lost))
                    continue
            setattr(self.counters, outcome.value, getattr(self.counters, outcome.value) + 1)
            self.counters.bytes_dropped += length
        return out

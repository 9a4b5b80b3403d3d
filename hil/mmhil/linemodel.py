"""The USB-serial adapter the bench puts on both lines (`mmbench --line-model`, hil/bench/uart_usb.h): its name
and parameters as `mmrig run --line MODEL[:k=v]` gives them, checked here so a bad one is a usage error before
any bench starts, and the parameters the run's sidecar records.

- `ideal`: no adapter (the bench as it always was, the default);
- `ftdi[:latency=MS]`: an FTDI chip, FTDI AN232B-04: the bytes a node sends wait until 62 fill a 64-byte USB
  packet (2 status bytes lead each) or the latency timer (16 ms unless set, 1..255 ms) expires; packets reach
  the host in 1 ms full-speed frames;
- `cdc-16u2`: the Arduino Mega 2560's ATmega16U2 with Arduino's USB-serial firmware: a flush every Timer0
  overflow (65536 cycles of 16 MHz, 4.096 ms) or when more than 96 bytes wait, then the next 1 ms frame.
Both adapters hand the host's bytes to the line at the next 1 ms frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("ideal", "ftdi", "cdc-16u2")
FRAME_S = 0.001                        # a full-speed USB frame
FTDI_LATENCY_MS = 16                   # AN232B-04: the latency timer's default
FTDI_LATENCY_RANGE = (1, 255)          # and the values the chip takes
FTDI_PACKET_DATA = 62                  # a 64-byte IN packet less its 2 status bytes
CDC16U2_FLUSH_S = 256 * 256 / 16e6     # Timer0 at clk/256 overflows every 4.096 ms
CDC16U2_NEARLY_FULL = 96               # LightweightRingBuff.h: more than this many waiting flushes at once


class LineModelError(ValueError):
    """A `--line` that names no model, or a parameter the model does not take (the message says which)."""


@dataclass(frozen=True)
class LineModel:
    kind: str = "ideal"
    latency_ms: int = FTDI_LATENCY_MS   # ftdi only

    @classmethod
    def parse(cls, spec: str) -> "LineModel":
        """`ideal`, `ftdi`, `ftdi:latency=MS` or `cdc-16u2` (the bench's own grammar: MODEL[:k=v[,k=v]])."""
        kind, _, rest = spec.strip().partition(":")
        if kind not in KINDS:
            raise LineModelError(f"unknown line model {kind!r}: one of {', '.join(KINDS)} (ftdi:latency=MS)")
        latency = FTDI_LATENCY_MS
        for kv in filter(None, rest.split(",")):
            key, eq, value = kv.partition("=")
            if kind != "ftdi":
                raise LineModelError(f"{kind} takes no parameters ({kv!r})")
            if key != "latency" or not eq:
                raise LineModelError(f"ftdi: unknown parameter {kv!r} (latency=MS)")
            low, high = FTDI_LATENCY_RANGE
            if not value.isdigit() or not low <= int(value) <= high:
                raise LineModelError(f"ftdi: latency={value}: whole ms from {low} to {high} (the chip's range)")
            latency = int(value)
        return cls(kind, latency)

    @classmethod
    def from_params(cls, params: dict[str, Any] | None) -> "LineModel":
        """The model a sidecar's `target.line_model` names (`params()`'s form); a run from before line models
        (None) had the ideal line."""
        if not params:
            return IDEAL
        if params.get("model") == "ftdi":
            return cls.parse(f"ftdi:latency={int(params.get('latency_timer_ms', FTDI_LATENCY_MS))}")
        return cls.parse(str(params.get("model", "ideal")))

    @property
    def spec(self) -> str:
        """What `mmbench --line-model` takes."""
        return f"ftdi:latency={self.latency_ms}" if self.kind == "ftdi" else self.kind

    def params(self) -> dict[str, Any]:
        """The model and its parameters, as the sidecar records them (the bench's status says the same)."""
        if self.kind == "ftdi":
            return {"model": "ftdi", "latency_timer_ms": self.latency_ms, "packet_data_bytes": FTDI_PACKET_DATA,
                    "frame_us": FRAME_S * 1e6}
        if self.kind == "cdc-16u2":
            return {"model": "cdc-16u2", "flush_period_us": CDC16U2_FLUSH_S * 1e6,
                    "flush_above_bytes": CDC16U2_NEARLY_FULL, "frame_us": FRAME_S * 1e6}
        return {"model": "ideal"}


IDEAL = LineModel()

__all__ = ["IDEAL", "KINDS", "LineModel", "LineModelError"]

"""What a built firmware image says when it boots: its own HELLO, read by running the image alone in the
bench's one-node mode (`mmbench --profiler ELF` or `--executor ELF`, hil/bench/main.c and stimulus.c: the
same way the firmware tests run their images) for a moment of virtual time and decoding what it wrote to
its UART (the --trace file's T lines: each byte as the MCU wrote UDR0).

`mmrig boards` compares a board's HELLO with this one: another firmware version, another `BAUD=` build or
another crystal shows as a field that differs, before a run finds it the hard way.

AVR ELF images run in the bench; an Intel HEX file is looked up as the ELF beside it (the Makefiles
flash build/avr/profiler.hex, built with build/avr/profiler.elf). An Intel HEX file with no ELF beside it is an
8051 image (profiler-fw/build/mcs51/profiler.ihx): it runs alone on ucsim's 8051 core (`run51`,
hil/bench/mcs51/README.md; built where tools/ucsim.sh could build the core), whose --trace has the same kind of
lines (`CLOCK TX BYTE`).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import mmproto as mp

from .bench import BENCH_BIN, F_CPU

ELF_MAGIC = b"\x7fELF"
EM_AVR = 83                   # the ELF header's e_machine for Atmel AVR
# Virtual time the image runs alone: the profiler's HELLO comes after its LED self-test (8 x 30 ms) and
# its frame (~25 ms at 9600 baud); the executor's after FreeRTOS starts (~5 ms, measured: its first byte at
# cycle ~0.1 M). 0.5 s leaves margin for the slowest build rate, and costs ~30 ms of host time.
BOOT_S = 0.5
BOOT_S_MAX = 4.0              # a HELLO not seen in BOOT_S is looked for this long before giving up


class ImageError(RuntimeError):
    """The image cannot be read or run, or it said no HELLO."""


@dataclass(frozen=True)
class ImageBoot:
    """What the image did alone: its boot HELLO, the frames it sent, and its status LED's changes (PB7, the
    bench's L lines: the executor's; the profiler's event LEDs are on PORTF, which the trace does not show)
    as (cycle, level)."""

    elf: Path
    role: str
    hello: mp.Hello
    frames: list[mp.Message] = field(default_factory=list)
    led: list[tuple[int, int]] = field(default_factory=list)
    cycles: int = 0


def elf_of(image: Path) -> Path:
    """The ELF to run for `image` (an ELF, or a .hex with its .elf beside it). Raises ImageError."""
    image = Path(image)
    if image.suffix in (".hex", ".ihx"):
        elf = image.with_suffix(".elf")
        if not elf.exists():
            raise ImageError(f"{image}: the bench runs ELF images, and there is no {elf.name} beside it")
        image = elf
    try:
        head = image.read_bytes()[:20]
    except OSError as exc:
        raise ImageError(f"{image}: {exc.strerror or exc}") from exc
    if head[:4] != ELF_MAGIC:
        raise ImageError(f"{image}: not an ELF file")
    machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    if machine != EM_AVR:
        raise ImageError(f"{image}: not an AVR image (ELF machine {machine}); only AVR images run in the bench")
    return image


def guess_role(elf: Path) -> str:
    """Which node's wiring to run the image with: from its name, else the profiler (the HELLO does not
    depend on it)."""
    return "executor" if "executor" in elf.name.lower() else "profiler"


def boot(image: Path, role: str | None = None, seconds: float = BOOT_S, bench_bin: Path | None = None) -> ImageBoot:
    """Runs `image` alone for `seconds` of virtual time (longer, up to BOOT_S_MAX, if no HELLO came) and
    returns what it did. Raises ImageError."""
    image = Path(image)
    if image.suffix in (".ihx", ".hex") and not image.with_suffix(".elf").exists():
        return _boot51(image, seconds)
    elf = elf_of(image)
    role = role or guess_role(elf)
    bench = Path(bench_bin or BENCH_BIN)
    if not bench.exists():
        raise ImageError(f"{bench} missing: build the bench (make -C hil)")
    while True:
        got = _run(elf, role, seconds, bench)
        if got.hello is not None or seconds >= BOOT_S_MAX:
            break
        seconds = min(BOOT_S_MAX, seconds * 2)
    if got.hello is None:
        raise ImageError(f"{elf}: no HELLO in {seconds} s of its boot alone in the bench")
    return ImageBoot(elf, role, got.hello, got.frames, got.led, got.cycles)


@dataclass
class _Run:
    hello: mp.Hello | None = None
    frames: list[mp.Message] = field(default_factory=list)
    led: list[tuple[int, int]] = field(default_factory=list)
    cycles: int = 0

    def feed(self, dec: mp.StreamDecoder, byte: int) -> None:
        """One byte the image wrote to its UART: the frames it completes, the first HELLO kept."""
        for r in dec.feed(bytes([byte])):
            self.frames.append(r.message)
            if self.hello is None and isinstance(r.message, mp.Hello):
                self.hello = r.message


def _trace_of(cmd: list[str], trace: Path, image: Path, what: str, ok: tuple[int, ...]) -> str:
    """Runs `cmd` (a simulator writing `trace`) and returns the trace's text. Raises ImageError."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ImageError(f"{image}: {what} could not run it: {exc}") from exc
    if proc.returncode not in ok or not trace.exists():
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ImageError(f"{image}: {what} could not run it (exit {proc.returncode}): {tail}")
    return trace.read_text()


def _run(elf: Path, role: str, seconds: float, bench: Path) -> _Run:
    cycles = int(seconds * F_CPU)
    with tempfile.TemporaryDirectory(prefix="mmrig-image.") as d:
        trace, stim = Path(d) / "trace.txt", Path(d) / "stimulus.txt"
        stim.write_text("# nothing from the other node or the host: the image's own boot\n")
        text = _trace_of([str(bench), f"--{role}", str(elf), "--stimulus", str(stim), "--trace", str(trace),
                          "--until-cycles", str(cycles), "--run-dir", str(Path(d) / "run")],
                         trace, elf, "the bench", ok=(0, 1))
    out = _Run()
    dec = mp.StreamDecoder()
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "T":
            out.feed(dec, int(parts[2], 16))
        elif parts[0] == "L":
            out.led.append((int(parts[1]), int(parts[2])))
        elif parts[0] == "END":
            out.cycles = int(parts[1])
    return out


RUN51 = BENCH_BIN.parent / "mcs51" / "run51"     # make -C hil mcs51 (hil/bench/mcs51/README.md)


def _boot51(image: Path, seconds: float) -> ImageBoot:
    """An 8051 image (Intel HEX) alone on ucsim's 8051 core for `seconds` of virtual time: its UART bytes."""
    if not image.exists():
        raise ImageError(f"{image}: no such file")
    if not RUN51.exists():
        raise ImageError(f"{image}: an 8051 image runs on ucsim's 8051 core, which is not built here "
                         "(bash tools/ucsim.sh, then make -C hil mcs51)")
    with tempfile.TemporaryDirectory(prefix="mmrig-image.") as d:
        trace = Path(d) / "trace.txt"
        text = _trace_of([str(RUN51), "--seconds", str(max(seconds, 0.5)), "--trace", str(trace), str(image)],
                         trace, image, "the 8051 core", ok=(0,))
    out = _Run()
    dec = mp.StreamDecoder()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "TX":
            out.feed(dec, int(parts[2], 16))
    if out.hello is None:
        raise ImageError(f"{image}: no HELLO in {seconds} s of its boot alone on the 8051 core")
    return ImageBoot(image, "profiler", out.hello, out.frames)


def boot_hello(image: Path, role: str | None = None) -> mp.Hello:
    """The HELLO `image` sends after its reset (see `boot`). Raises ImageError."""
    return boot(image, role).hello


__all__ = ["BOOT_S", "RUN51", "ImageBoot", "ImageError", "boot", "boot_hello", "elf_of", "guess_role"]

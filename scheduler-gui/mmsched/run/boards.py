"""`mmrig boards`: which serial port is which node, is it running the firmware we built, and is its link fit
for timing: the board-agnostic part (no mmhil, no Qt; the command line brings the bench and the images'
HELLOs, mmhil.images).

For each port: the node's HELLO, read as a run reads it (mmproto.Link.handshake, listening first where
the open resets the node: an Arduino's DTR), in words (node kind, protocol and firmware version, clocks,
tick, baud, reset cause); the HELLO the built image sends at its own boot, field by field (another
firmware version, another `BAUD=` build, another crystal); the USB-serial latency (an FTDI adapter's
latency timer, mmsched.link.usbserial; the Mega's own 16U2 flushes every 4.1 ms, fixed) and the adapter's driver
(ftdi_sio, cdc_acm, ch341, ... from sysfs). With both nodes found,
a short self-test: the LED self-test the firmware shows at reset, and a few events in verification mode
through the normal Runner.

Output: one table, then "what to fix" lines (or `--json`). Exit status (EXIT_*): 0 all good, 1 something to
fix (the lines say what), 2 usage error.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import mmproto as mp
from mmproto import Hello, Link, LinkError

from ..link import usbserial

EXIT_OK = 0
EXIT_FIX = 1
EXIT_USAGE = 2
EXIT_CODES = {EXIT_OK: "every port answered, matches its image, and the self-test (if run) was on time",
              EXIT_FIX: "something to fix: the lines after the table say what",
              EXIT_USAGE: "usage error (bad option, no such port, an image that cannot be read)"}
HELLO_TIMEOUT_S = 5.0          # per port: listening (mmproto.link.HELLO_LISTEN_S) and asking, as a run's handshake
SELF_TEST_EVENTS = 5
ACM_FLUSH_MS = 4.1             # the Mega's ATmega16U2 (USB-serial firmware) sends what it has every 4.1 ms
ROLE = {int(mp.NodeKind.PROFILER): "profiler", int(mp.NodeKind.EXECUTOR): "executor"}
# The fields a board's HELLO must share with its image's (reset_cause is the board's own story)
COMPARED = ("proto_version", "node_kind", "fw_version", "cpu_hz", "timer_hz", "tick_counts", "baud", "flags")
# What the firmware's boot self-test shows (profiler-fw/core/pf_core.c pf_led_post, PF_POST_MS 30 on AVR and
# 8051; executor/port/avr/main.c status task and halt())
LED_POST = {
    "profiler": "event LEDs 0..7 (Mega A0..A7 / 8051 P2.0..P2.7) light one at a time for 30 ms each right after "
                "reset (0.24 s), then go dark; a LED that never lit is unwired or dead",
    "executor": "status LED (Mega pin 13, PB7) blinks: 496 ms half period idle, 248 ms verification, 120 ms mixed; "
                "lit steadily = halted (assertion or stack overflow; the watchdog resets it ~16 ms later)",
}


@dataclass(frozen=True)
class PortInfo:
    """A serial port as the OS lists it (pyserial's list_ports)."""

    device: str
    description: str
    vid_pid: str | None          # "2341:0042" (USB vendor:product), None if not USB
    serial_number: str | None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def list_ports() -> list[PortInfo]:
    """The serial ports the OS knows (device, description, USB VID:PID, serial number)."""
    from serial.tools import list_ports as lp

    found = []
    for p in sorted(lp.comports(), key=lambda p: p.device):
        vid_pid = f"{p.vid:04x}:{p.pid:04x}" if p.vid is not None and p.pid is not None else None
        found.append(PortInfo(p.device, p.description or "", vid_pid, p.serial_number))
    return found


def hello_words(h: Hello) -> dict[str, Any]:
    """A HELLO in the table's words (and the JSON's)."""
    return {"node": ROLE.get(h.node_kind, f"kind {h.node_kind}"), "protocol": h.proto_version,
            "firmware": mp.fw_version_text(h.fw_version), "cpu_hz": h.cpu_hz, "timer_hz": h.timer_hz,
            "tick_ms": round(h.tick_counts / h.timer_hz * 1000, 3) if h.timer_hz else None, "baud": h.baud,
            "flags": h.flags, "reset_cause": mp.ResetCause.words(h.reset_cause)}


def differences(board: Hello, image: Hello) -> dict[str, tuple[int, int]]:
    """The fields (COMPARED) where the board's HELLO is not its image's: name -> (board, image)."""
    return {f: (getattr(board, f), getattr(image, f)) for f in COMPARED if getattr(board, f) != getattr(image, f)}


def mismatch_fixes(port: str, role: str, diff: dict[str, tuple[int, int]]) -> list[str]:
    """What to do about each difference, one line each."""
    flash = f"make flash-{role} PORT={port}"
    out = []
    for f, (b, i) in diff.items():
        if f == "fw_version":
            out.append(f"{port}: the {role} runs firmware {mp.fw_version_text(b)}, the build is {mp.fw_version_text(i)}: flash it ({flash})")
        elif f == "baud":
            out.append(f"{port}: the {role} was built for {b} baud, the image for {i} (another BAUD= build): "
                       f"flash the image ({flash}), or build with BAUD={b}")
        elif f == "node_kind":
            out.append(f"{port}: this is a {ROLE.get(b, b)}, the image is a {ROLE.get(i, i)}'s: "
                       "wrong port, or the wrong image flashed")
        elif f == "proto_version":
            out.append(f"{port}: the {role} speaks protocol {b}, the build {i}: flash it ({flash})")
        else:
            out.append(f"{port}: the {role}'s {f} is {b}, the image's {i} (another board or build option): "
                       f"flash the image ({flash}) or check the crystal")
    return out


@dataclass(frozen=True)
class Latency:
    """How late the PC reads a port's bytes because of its USB-serial bridge: `kind` ftdi (a latency timer,
    settable), acm (a CDC-ACM board such as the Mega's 16U2: 4.1 ms flush, fixed), none (pty, URL, other);
    `driver` the tty's kernel driver as sysfs names it (ftdi_sio, cdc_acm, ch341, ...; None: sysfs does not
    say, or no adapter)."""

    kind: str
    ms: float | None
    fix: str | None = None
    note: str | None = None
    driver: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def latency(port: str, sysfs: Path | str = usbserial.SYSFS) -> Latency:
    """The port's USB-serial latency where Linux shows it (`sysfs`: a fake tree in tests)."""
    timer = usbserial.latency_timer(port, sysfs)
    driver = usbserial.driver(port, sysfs)
    if timer is not None:
        if timer.ms > usbserial.GOOD_MS:
            return Latency("ftdi", timer.ms, f"{port}: FTDI latency timer {timer.ms} ms (default 16): the PC reads "
                                             f"frames up to {timer.ms} ms late; set 1 ms for a run (mmrig run "
                                             f"--latency-timer 1) or: {timer.fix()}", driver=driver)
        return Latency("ftdi", timer.ms, driver=driver)
    name = usbserial.tty_name(port)
    if driver == "cdc_acm" or (driver is None and name is not None and name.startswith("ttyACM")):
        return Latency("acm", ACM_FLUSH_MS, note=f"{port}: a CDC-ACM board (a Mega's ATmega16U2) sends what it has "
                                                 f"every {ACM_FLUSH_MS} ms; fixed in its USB firmware, nothing to set "
                                                 "(normal mode's tick estimate carries it)", driver=driver)
    return Latency("none", None, driver=driver)


@dataclass
class PortCheck:
    """One port: what answered, how it compares with its image, the link's latency, what to fix."""

    port: str
    hello: Hello | None = None
    error: str | None = None             # no HELLO (or a port error): why
    image: Hello | None = None           # the built image's boot HELLO for this node, if known
    image_path: str | None = None
    diff: dict[str, tuple[int, int]] = field(default_factory=dict)
    latency: Latency = field(default_factory=lambda: Latency("none", None))
    info: PortInfo | None = None
    fixes: list[str] = field(default_factory=list)

    @property
    def role(self) -> str | None:
        return ROLE.get(self.hello.node_kind) if self.hello is not None else None

    def as_dict(self) -> dict[str, Any]:
        return {"port": self.port, "role": self.role, "hello": dict(self.hello.__dict__) if self.hello else None,
                "words": hello_words(self.hello) if self.hello else None, "error": self.error,
                "image": self.image_path, "image_hello": dict(self.image.__dict__) if self.image else None,
                "matches_image": None if self.hello is None or self.image is None else not self.diff,
                "differences": {k: {"board": b, "image": i} for k, (b, i) in self.diff.items()},
                "latency": self.latency.as_dict(), "usb": self.info.as_dict() if self.info else None,
                "fixes": self.fixes}


def read_hello(port: str, baud: int = 9600, reset_on_open: bool = True,
               timeout_s: float = HELLO_TIMEOUT_S) -> tuple[Hello | None, str | None]:
    """The HELLO of whatever node is on `port` (either kind; a protocol version we do not speak is still
    shown), read as a run does (Link.handshake); or None and why."""
    link = Link("profiler", port, lambda _item: None, baud=baud, reset_on_open=reset_on_open)
    try:
        link.open()
        try:
            return link.handshake(timeout_s), None
        except LinkError as exc:
            if exc.code in ("node_kind", "protocol_version") and link.hello is not None:
                return link.hello, None      # judged by the caller
            return None, str(exc).replace("profiler: ", "", 1)
    except LinkError as exc:
        return None, str(exc).replace("profiler: ", "", 1)
    finally:
        link.close()


def check_port(port: str, images: dict[str, tuple[str, Hello]], baud: int | None = None,
               reset_on_open: bool = True, sysfs: Path | str = usbserial.SYSFS, info: PortInfo | None = None,
               timeout_s: float = HELLO_TIMEOUT_S) -> PortCheck:
    """One port's check. `images`: role -> (image path, its boot HELLO); `baud`: the port's rate (None: the
    images' rate, else 9600)."""
    rates = {h.baud for _, h in images.values()}
    rate = baud or (rates.pop() if len(rates) == 1 else 9600)
    c = PortCheck(port, info=info, latency=latency(port, sysfs))
    c.hello, c.error = read_hello(port, rate, reset_on_open, timeout_s)
    if c.hello is None:
        hint = (" (is the node powered and flashed? wrong --baud, or another BAUD= build? a USB-serial adapter "
                "without DTR reset wants --no-reset-on-open)")
        c.fixes.append(f"{port}: no answer at {rate} baud: {c.error}{hint}")
    else:
        role = c.role or "node"
        if c.hello.proto_version != mp.PROTO_VERSION:
            c.fixes.append(f"{port}: the {role} speaks protocol {c.hello.proto_version}, this mmrig "
                           f"{mp.PROTO_VERSION}: flash the current firmware (make flash-{role} PORT={port})")
        if c.role in images:
            c.image_path, c.image = images[c.role]
            c.diff = differences(c.hello, c.image)
            c.fixes += mismatch_fixes(port, role, {k: v for k, v in c.diff.items() if k != "proto_version"})
    if c.latency.fix:
        c.fixes.append(c.latency.fix)
    return c


@dataclass
class SelfTest:
    """The short run of both nodes: `count` events in verification mode, how many on time."""

    count: int
    on_time: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    valid: bool = False
    error: str | None = None
    led_post: dict[str, str] = field(default_factory=lambda: dict(LED_POST))

    @property
    def ok(self) -> bool:
        return self.error is None and self.valid and self.on_time == self.count

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "ok": self.ok}


def self_test(endpoint: Any, count: int = SELF_TEST_EVENTS, log: Callable[[str], None] | None = None) -> SelfTest:
    """`count` events in verification mode through the normal Runner against `endpoint` (mmsched.link.endpoint):
    the executor dispatches each at its tick, the profiler stamps it: on time = outcome ok."""
    from ..model.config import RunConfig
    from .runner import Runner

    st = SelfTest(count)
    with tempfile.TemporaryDirectory(prefix="mmrig-boards.") as d:
        cfg = RunConfig(mode="verification", distance=2, count=count, name="boards-self-test",
                        out=Path(d) / "self-test")
        try:
            res = Runner(cfg, endpoint, log=log).run()
        except (LinkError, RuntimeError) as exc:
            st.error = str(exc)
            return st
    for e in res.events:
        key = e.outcome if not e.reason else f"{e.outcome}/{e.reason}"
        st.outcomes[key] = st.outcomes.get(key, 0) + 1
    st.on_time = sum(1 for e in res.events if e.outcome == "ok")
    st.valid = res.valid
    if not res.valid:
        st.error = "; ".join(r["text"] for r in res.sidecar.get("invalid_reasons", [])) or "invalid run"
    return st


@dataclass
class Report:
    ports: list[PortCheck]
    self_test: SelfTest | None = None
    notes: list[str] = field(default_factory=list)      # what was not checked, and why

    def roles(self) -> dict[str, PortCheck]:
        """The first port found for each node kind."""
        out: dict[str, PortCheck] = {}
        for c in self.ports:
            if c.role and c.role not in out:
                out[c.role] = c
        return out

    def fixes(self) -> list[str]:
        if not self.ports:
            return ["no serial port to check: plug the boards in (dmesg says which tty each became), or give the "
                    "PORTs, or --bench"]
        out = [f for c in self.ports for f in c.fixes]
        found = self.roles()
        for role in ("profiler", "executor"):
            if self.ports and role not in found:
                out.append(f"no {role} answered on {', '.join(c.port for c in self.ports)}")
        st = self.self_test
        if st is not None and not st.ok:
            why = st.error or f"{st.on_time} of {st.count} events on time ({st.outcomes})"
            out.append(f"self-test: {why}")
        return out

    def exit_code(self) -> int:
        return EXIT_FIX if self.fixes() else EXIT_OK

    def as_dict(self) -> dict[str, Any]:
        return {"ports": [c.as_dict() for c in self.ports],
                "self_test": self.self_test.as_dict() if self.self_test else None,
                "notes": self.notes, "fixes": self.fixes(), "exit": self.exit_code()}


COLUMNS = ("port", "node", "protocol", "firmware", "cpu_hz", "timer_hz", "tick_ms", "baud", "reset_cause",
           "image", "adapter", "usb_latency")


def table(report: Report) -> str:
    """One table: a row per port."""
    rows = [list(COLUMNS)]
    for c in report.ports:
        w = hello_words(c.hello) if c.hello else {}
        image = "-" if c.image is None else ("same" if not c.diff else "DIFFERS: " + ",".join(c.diff))
        lat = (f"ftdi {c.latency.ms:g} ms" if c.latency.kind == "ftdi" else
               f"acm {c.latency.ms:g} ms (fixed)" if c.latency.kind == "acm" else "-")
        rows.append([c.port, w.get("node", "NO ANSWER"), *(str(w.get(k, "-")) for k in COLUMNS[2:9]), image,
                     c.latency.driver or "-", lat])
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(v.ljust(widths[i]) for i, v in enumerate(r)).rstrip() for r in rows)


def text(report: Report) -> str:
    """The table, the self-test, then what to fix (or that nothing is)."""
    lines = [table(report)]
    st = report.self_test
    if st is not None:
        lines.append("")
        lines.append(f"self-test: {st.on_time} of {st.count} events on time in verification mode"
                     + ("" if st.error is None else f" ({st.error})"))
        lines.append("LED self-test at reset (look at the boards):")
        lines += [f"  {role}: {what}" for role, what in st.led_post.items()]
    lines += [f"note: {n}" for n in report.notes + [c.latency.note for c in report.ports if c.latency.note]]
    fixes = report.fixes()
    lines.append("")
    lines += ["what to fix:"] + [f"  - {f}" for f in fixes] if fixes else ["nothing to fix"]
    return "\n".join(lines)


def expect_line(check: PortCheck) -> tuple[int, str]:
    """`--expect-image`: one line and the exit status (0 the board's HELLO is the image's, 1 not or none)."""
    if check.hello is None:
        return EXIT_FIX, f"{check.port}: no HELLO ({check.error})"
    w = hello_words(check.hello)
    what = f"{w['node']} firmware {w['firmware']}, {w['baud']} baud, {w['cpu_hz']} Hz"
    if check.image is None:
        return EXIT_FIX, f"{check.port}: {what}; the image is not a {w['node']}'s"
    if check.diff:
        return EXIT_FIX, (f"{check.port}: MISMATCH with {check.image_path}: "
                          + ", ".join(f"{k} board {b} image {i}" for k, (b, i) in check.diff.items()))
    return EXIT_OK, f"{check.port}: {what}: matches {check.image_path}"


__all__ = ["COMPARED", "EXIT_CODES", "EXIT_FIX", "EXIT_OK", "EXIT_USAGE", "LED_POST", "Latency",
           "PortCheck", "PortInfo", "Report", "SelfTest", "check_port", "differences", "expect_line", "hello_words",
           "latency", "list_ports", "read_hello", "self_test", "table", "text"]

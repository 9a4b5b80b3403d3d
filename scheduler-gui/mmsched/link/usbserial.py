"""USB-serial adapters: the FTDI latency timer, found from a port's path (docs/hardware.md, "USB-serial latency").

An FTDI adapter (Linux driver ftdi_sio) holds the bytes it receives until its buffer fills or its latency
timer runs out: 16 ms by default. Every frame the PC reads from a board behind one arrives up to that much
late, so in normal mode the tick starts the scheduler infers from TIMECODE arrivals are late and jittery by
as much (the latency budget's estimate part), which swamps the PC's own lateness the rig is there to measure.
The driver shows the timer in sysfs (`/sys/bus/usb-serial/devices/ttyUSB0/latency_timer`, in ms; only
ftdi_sio has this attribute); writing 1 there (as root) sets it to 1 ms.

Qt-free and side-effect free: it only reads sysfs. `sysfs` is a parameter so tests can use a fake tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SYSFS = Path("/sys")
CODE = "usb_latency_timer"        # the warning's code
GOOD_MS = 1                       # a latency timer above this is worth a warning


@dataclass(frozen=True)
class PortWarning:
    """Something about a port the user should know and can fix; the run goes on. `code` is stable
    ("usb_latency_timer"), `text` one line for a person."""

    code: str
    text: str


@dataclass(frozen=True)
class LatencyTimer:
    """An FTDI port's latency timer: the tty's name, the sysfs attribute (to write 1 into) and its value."""

    port: str
    tty: str
    path: Path
    ms: int

    def fix(self) -> str:
        """The commands that set it to 1 ms (the first lasts until the adapter is unplugged)."""
        return (f"echo 1 | sudo tee {self.path}  (or: sudo setserial /dev/{self.tty} low_latency; for good: a udev "
                "rule, docs/hardware.md \"USB-serial latency\")")


def tty_name(port: str) -> str | None:
    """The kernel's name of the tty behind `port` (ttyUSB0 for /dev/ttyUSB0 or a /dev/serial/by-id/... link
    to it); None for a pyserial URL (socket://, rfc2217://, loop://) or a pseudo-terminal (/dev/pts/N)."""
    if not port or "://" in port:
        return None
    try:
        resolved = Path(port).resolve()
    except (OSError, RuntimeError):   # a symlink loop, say
        return None
    if resolved.parent.name == "pts" or not resolved.name:
        return None
    return resolved.name


def latency_timer(port: str, sysfs: Path | str = SYSFS) -> LatencyTimer | None:
    """The FTDI latency timer of `port`, or None where there is none to read (not an FTDI adapter: a CDC-ACM
    board such as /dev/ttyACM0, a CP210x or CH340 adapter, a pty, a URL; or sysfs not readable)."""
    name = tty_name(port)
    if name is None:
        return None
    sysfs = Path(sysfs)
    for attribute in (sysfs / "bus/usb-serial/devices" / name / "latency_timer",
                      sysfs / "class/tty" / name / "device/latency_timer"):
        try:
            text = attribute.read_text().strip()
        except OSError:
            continue
        try:
            return LatencyTimer(port=port, tty=name, path=attribute, ms=int(text))
        except ValueError:
            return None
    return None


def latency_timer_ms(port: str, sysfs: Path | str = SYSFS) -> int | None:
    """The latency timer of `port` in ms; None for non-FTDI, pty and URL ports."""
    found = latency_timer(port, sysfs)
    return found.ms if found is not None else None


def latency_warning(role: str, timer: LatencyTimer | None) -> PortWarning | None:
    """A warning when `timer` is above 1 ms; `role` names the node ("profiler", "executor")."""
    if timer is None or timer.ms <= GOOD_MS:
        return None
    return PortWarning(CODE, f"{role} port {timer.port} is an FTDI adapter with a {timer.ms} ms latency timer: "
                             f"the PC reads its frames up to {timer.ms} ms late (normal-mode timing is ruined); "
                             f"set it to 1 ms: {timer.fix()}")

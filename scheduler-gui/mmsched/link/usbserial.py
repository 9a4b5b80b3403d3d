"""USB-serial adapters: which driver a port is on and the FTDI latency timer, found from a port's path, and the
timer set for a run and restored (docs/hardware.md, "USB-serial latency"; docs/usb-serial.md).

An FTDI adapter (Linux driver ftdi_sio) holds the bytes it receives until its buffer fills or its latency
timer runs out: 16 ms by default. Every frame the PC reads from a board behind one arrives up to that much
late, so in normal mode the tick starts the scheduler infers from TIMECODE arrivals are late and jittery by
as much (the latency budget's estimate part), which swamps the PC's own lateness the rig is there to measure.
The driver shows the timer in sysfs (`/sys/bus/usb-serial/devices/ttyUSB0/latency_timer`, in ms; only
ftdi_sio has this attribute); writing 1 there (as root, or where the udev rule of docs/usb-serial.md lets the
user) sets it to 1 ms. A tty's driver is the `driver` link of its device in sysfs
(`/sys/class/tty/ttyUSB0/device/driver` -> .../ftdi_sio; a Mega's `ttyACM0` -> cdc_acm; a CH340 -> ch341).

Qt-free; it reads sysfs and writes only a latency timer it is asked to (`set_latency_timer`). `sysfs` is a
parameter so tests can use a fake tree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

SYSFS = Path("/sys")
CODE = "usb_latency_timer"        # the warning's code
GOOD_MS = 1                       # a latency timer above this is worth a warning
TIMER_RANGE_MS = (1, 255)         # what ftdi_sio takes (FTDI AN232B-04: the chip's range)


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


def driver(port: str, sysfs: Path | str = SYSFS) -> str | None:
    """The kernel driver of `port`'s USB-serial chip (ftdi_sio, cdc_acm, ch341, cp210x, pl2303, ...) from sysfs;
    None for a URL, a pty, or where sysfs does not say. A tty's device is the USB interface itself for cdc_acm
    (its `driver` link names it) and a usb-serial port under the interface otherwise, whose own driver is the
    usb-serial one (`ch341-uart`): the interface's, one level up, names the chip (`ch341`)."""
    name = tty_name(port)
    if name is None:
        return None
    device = Path(sysfs) / "class/tty" / name / "device"
    try:
        own = Path(os.readlink(device / "driver"))
    except OSError:
        return None
    if own.parent.parent.name == "usb-serial":     # .../bus/usb-serial/drivers/NAME
        try:
            return Path(os.readlink(device / ".." / "driver")).name   # (the kernel takes ".." after the link)
        except OSError:
            pass
    return own.name


@dataclass(frozen=True)
class Adapter:
    """A port's USB-serial adapter as sysfs shows it: its tty, the driver, and the FTDI latency timer (None:
    the driver has none)."""

    port: str
    tty: str
    driver: str | None
    timer: LatencyTimer | None

    def words(self) -> str:
        """One cell: `ftdi_sio, latency 16 ms`, `cdc_acm`, `unknown driver`."""
        name = self.driver or "unknown driver"
        return f"{name}, latency {self.timer.ms} ms" if self.timer is not None else name


def adapter(port: str, sysfs: Path | str = SYSFS) -> Adapter | None:
    """`port`'s adapter (None for a pyserial URL or a pty: no adapter in sysfs)."""
    name = tty_name(port)
    if name is None:
        return None
    return Adapter(port, name, driver(port, sysfs), latency_timer(port, sysfs))


class LatencyTimerError(Exception):
    """A latency timer that cannot be set: not an FTDI port, a value out of range, or no permission (the text
    says which, and the fix)."""


def set_problem(timer: LatencyTimer, ms: int) -> str | None:
    """Why `timer` cannot be set to `ms` ms by this user, or None: checked before a run starts."""
    low, high = TIMER_RANGE_MS
    if not low <= ms <= high:
        return f"{ms} ms: the FTDI latency timer takes {low} to {high} ms"
    if not os.access(timer.path, os.W_OK):
        return (f"{timer.port}: its latency timer ({timer.path}) is not writable by this user: run as root, or "
                "install the udev rule of docs/usb-serial.md (group dialout may write it), then plug it in again")
    return None


def set_latency_timer(timer: LatencyTimer, ms: int) -> LatencyTimer:
    """Writes `ms` into the timer's sysfs attribute; the timer as it is now. LatencyTimerError if it cannot."""
    if (why := set_problem(timer, ms)) is not None:
        raise LatencyTimerError(why)
    try:
        timer.path.write_text(f"{ms}\n")
    except OSError as exc:
        raise LatencyTimerError(f"{timer.port}: cannot set its latency timer ({timer.path}): "
                                f"{exc.strerror or exc}") from exc
    return replace(timer, ms=ms)


def latency_timer_ms(port: str, sysfs: Path | str = SYSFS) -> int | None:
    """The latency timer of `port` in ms; None for non-FTDI, pty and URL ports."""
    found = latency_timer(port, sysfs)
    return found.ms if found is not None else None


def latency_warning(role: str, timer: LatencyTimer | None) -> PortWarning | None:
    """A warning when `timer` is above 1 ms, saying what it costs; `role` names the node ("profiler",
    "executor")."""
    if timer is None or timer.ms <= GOOD_MS:
        return None
    # the cost, from the adapter model (hil/bench/uart_usb.c): a frame waits for the timer's next expiry, up to
    # its whole period and half of it on average; normal mode places its FIREs from those arrivals, and mixed
    # mode's slack shrinks by as much
    return PortWarning(CODE, f"{role} port {timer.port} is an FTDI adapter with a {timer.ms} ms latency timer: "
                             f"the PC reads its frames up to {timer.ms} ms late ({timer.ms / 2:g} ms on average): "
                             f"normal mode's tick estimate and FIREs move by as much, mixed mode's slack shrinks "
                             f"by as much; set it to 1 ms for the run (mmrig run --latency-timer 1) or for good: "
                             f"{timer.fix()}")

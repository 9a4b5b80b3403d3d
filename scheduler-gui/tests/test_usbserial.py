"""FTDI latency timer detection (mmsched.link.usbserial) on a fake sysfs tree, and the boards' warning."""

from __future__ import annotations

import os
import pty
from pathlib import Path

import pytest

from mmrig import cli
from mmsched.link import usbserial
from mmsched.link.endpoint import Boards
from mmsched.link.usbserial import CODE, latency_timer, latency_timer_ms, tty_name


def fake_sysfs(root: Path) -> Path:
    """A sysfs tree as Linux lays it out: two FTDI ports (ftdi_sio: latency_timer), a CP210x one (no such
    attribute), a CDC-ACM board (not usb-serial at all) and an FTDI port seen only through /sys/class/tty."""
    sysfs = root / "sys"
    devices = sysfs / "bus/usb-serial/devices"
    for name, ms in (("ttyUSB0", "16\n"), ("ttyUSB1", "1\n")):
        (devices / name).mkdir(parents=True)
        (devices / name / "latency_timer").write_text(ms)
    (devices / "ttyUSB2").mkdir(parents=True)            # cp210x: a usb-serial port without the attribute
    (sysfs / "class/tty/ttyACM0/device").mkdir(parents=True)
    (sysfs / "class/tty/ttyUSB3/device").mkdir(parents=True)
    (sysfs / "class/tty/ttyUSB3/device/latency_timer").write_text("4\n")
    return sysfs


def by_id_link(root: Path, target: str) -> Path:
    """/dev/serial/by-id/usb-FTDI_...-port0 -> ../../<target>, as udev makes it."""
    (root / "dev/serial/by-id").mkdir(parents=True, exist_ok=True)
    (root / "dev" / target).touch()
    link = root / "dev/serial/by-id" / f"usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0-{target}"
    link.symlink_to(Path("../..") / target)
    return link


def test_an_ftdi_port_gives_its_latency_timer(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    assert latency_timer_ms("/dev/ttyUSB0", sysfs) == 16
    assert latency_timer_ms("/dev/ttyUSB1", sysfs) == 1
    found = latency_timer("/dev/ttyUSB0", sysfs)
    assert found is not None and found.tty == "ttyUSB0"
    assert found.path == sysfs / "bus/usb-serial/devices/ttyUSB0/latency_timer"


def test_a_by_id_symlink_is_resolved_to_its_tty(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    link = by_id_link(tmp_path, "ttyUSB0")
    assert tty_name(str(link)) == "ttyUSB0"
    assert latency_timer_ms(str(link), sysfs) == 16


def test_the_class_tty_path_is_read_too(tmp_path: Path) -> None:
    assert latency_timer_ms("/dev/ttyUSB3", fake_sysfs(tmp_path)) == 4


@pytest.mark.parametrize("port", ["/dev/ttyUSB2", "/dev/ttyACM0", "/dev/ttyUSB9", "socket://localhost:7000",
                                  "rfc2217://host:2217", "loop://", ""])
def test_ports_without_a_latency_timer_give_none(tmp_path: Path, port: str) -> None:
    assert latency_timer_ms(port, fake_sysfs(tmp_path)) is None


def test_a_pty_gives_none(tmp_path: Path) -> None:
    controller, device = pty.openpty()
    try:
        name = os.ttyname(device)
        assert tty_name(name) is None
        assert latency_timer_ms(name) is None                      # the real /sys
        assert latency_timer_ms(name, fake_sysfs(tmp_path)) is None
    finally:
        os.close(controller)
        os.close(device)


def test_an_unreadable_value_gives_none(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    (sysfs / "bus/usb-serial/devices/ttyUSB0/latency_timer").write_text("sixteen\n")
    assert latency_timer_ms("/dev/ttyUSB0", sysfs) is None


def test_boards_record_the_timers_and_warn_above_1_ms(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    boards = Boards("/dev/ttyUSB0", "/dev/ttyACM0", sysfs=str(sysfs))
    ident = boards.identity()
    assert ident["usb_latency_timer_ms"] == {"profiler": 16, "executor": None}
    [warning] = boards.warnings()
    assert warning.code == CODE == "usb_latency_timer"
    assert "16 ms" in warning.text and "/dev/ttyUSB0" in warning.text
    assert f"echo 1 | sudo tee {sysfs}/bus/usb-serial/devices/ttyUSB0/latency_timer" in warning.text
    assert ident["warnings"] == [{"code": "usb_latency_timer", "text": warning.text}]


def test_boards_at_1_ms_or_not_ftdi_have_no_warning(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    assert Boards("/dev/ttyUSB1", "/dev/ttyUSB2", sysfs=str(sysfs)).warnings() == []
    ident = Boards("loop://", sysfs=str(sysfs)).identity()
    assert ident["usb_latency_timer_ms"] == {"profiler": None} and ident["warnings"] == []


def test_mmrig_run_prints_one_warning_line_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    sysfs = fake_sysfs(tmp_path)
    real = usbserial.latency_timer
    monkeypatch.setattr(usbserial, "latency_timer", lambda port, _sysfs="/sys": real(port, sysfs))
    link = by_id_link(tmp_path, "ttyUSB0")      # a file, not a port: the run then stops at opening it
    assert cli.main(["run", "--mode", "normal", "--count", "1", "--profiler", str(link)]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if "WARNING" in line]
    assert len(lines) == 1
    assert "16 ms latency timer" in lines[0] and "sudo tee" in lines[0] and "low_latency" in lines[0]

"""Real USB-serial adapters read and set, on a fake sysfs tree laid out as Linux lays it out: each port's driver
(ftdi_sio, cdc_acm, ch341) and FTDI latency timer in `mmrig boards`, and `mmrig run --latency-timer MS` setting the
timer for the run and putting it back (mmsched.link.usbserial, mmsched.link.endpoint.Boards)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

import mmproto as mp
from mmrig import cli, endpoints
from mmsched.run import boards as b
from mmsched.link import usbserial
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Boards, EndpointError
from test_usbserial import by_id_link   # the same fake udev link (a file, not a port)


def fake_sysfs(root: Path) -> Path:
    """Three adapters as sysfs shows them: an FTDI cable (ttyUSB0: a usb-serial port under its USB interface, both
    on ftdi_sio, the latency timer at 16 ms), a Mega's 16U2 (ttyACM0: the interface itself, on cdc_acm) and a CH340
    (ttyUSB1: the port on ch341-uart, its interface on ch341). /sys/class/tty/NAME/device is a link into
    /sys/devices, as on Linux."""
    sysfs = root / "sys"
    for bus, name in (("usb-serial", "ftdi_sio"), ("usb", "ftdi_sio"), ("usb", "cdc_acm"),
                      ("usb-serial", "ch341-uart"), ("usb", "ch341")):
        (sysfs / "bus" / bus / "drivers" / name).mkdir(parents=True, exist_ok=True)
    usb = sysfs / "devices/pci0000:00/0000:00:14.0/usb1"
    layout = {"ttyUSB0": ("1-1/1-1:1.0", "ftdi_sio", "ftdi_sio"), "ttyACM0": ("1-2/1-2:1.0", None, "cdc_acm"),
              "ttyUSB1": ("1-3/1-3:1.0", "ch341-uart", "ch341")}
    for tty, (interface, port_driver, chip_driver) in layout.items():
        iface = usb / interface
        iface.mkdir(parents=True)
        (iface / "driver").symlink_to(os.path.relpath(sysfs / "bus/usb/drivers" / chip_driver, iface))
        device = iface
        if port_driver is not None:         # a usb-serial port under the interface
            device = iface / tty
            device.mkdir()
            (device / "driver").symlink_to(os.path.relpath(sysfs / "bus/usb-serial/drivers" / port_driver, device))
            serial = sysfs / "bus/usb-serial/devices"
            serial.mkdir(parents=True, exist_ok=True)
            (serial / tty).symlink_to(os.path.relpath(device, serial))
        (sysfs / "class/tty" / tty).mkdir(parents=True)
        (sysfs / "class/tty" / tty / "device").symlink_to(os.path.relpath(device, sysfs / "class/tty" / tty))
    (usb / "1-1/1-1:1.0/ttyUSB0/latency_timer").write_text("16\n")
    return sysfs


def timer_file(sysfs: Path) -> Path:
    return sysfs / "bus/usb-serial/devices/ttyUSB0/latency_timer"


def test_each_ports_driver_is_named_from_sysfs(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    assert usbserial.driver("/dev/ttyUSB0", sysfs) == "ftdi_sio"
    assert usbserial.driver("/dev/ttyACM0", sysfs) == "cdc_acm"
    assert usbserial.driver("/dev/ttyUSB1", sysfs) == "ch341"        # the chip's driver, not ch341-uart
    assert usbserial.driver("/dev/ttyUSB7", sysfs) is None             # not in sysfs
    assert usbserial.driver("socket://localhost:7000", sysfs) is None
    ftdi = usbserial.adapter("/dev/ttyUSB0", sysfs)
    assert ftdi is not None and ftdi.timer is not None and ftdi.words() == "ftdi_sio, latency 16 ms"
    assert usbserial.adapter("/dev/ttyACM0", sysfs).words() == "cdc_acm"


def test_mmrig_boards_names_an_ftdi_ports_timer_and_a_cdc_ports_driver(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    hello = mp.Hello(mp.PROTO_VERSION, mp.NodeKind.PROFILER, 0x0200, 16_000_000, 16_000_000, 1_137_778, 9600, 0, 2)
    checks = [b.PortCheck(port, hello, latency=b.latency(port, sysfs))
              for port in ("/dev/ttyUSB0", "/dev/ttyACM0", "/dev/ttyUSB1")]
    assert [(c.latency.kind, c.latency.driver, c.latency.ms) for c in checks] == [
        ("ftdi", "ftdi_sio", 16), ("acm", "cdc_acm", b.ACM_FLUSH_MS), ("none", "ch341", None)]
    rows = b.table(b.Report(checks)).splitlines()
    assert rows[0].split()[-2:] == ["adapter", "usb_latency"]
    assert rows[1].split()[-4:] == ["ftdi_sio", "ftdi", "16", "ms"]
    assert "cdc_acm" in rows[2] and "acm 4.1 ms (fixed)" in rows[2]
    assert "ch341" in rows[3]
    assert "--latency-timer 1" in checks[0].latency.fix
    assert checks[0].as_dict()["latency"]["driver"] == "ftdi_sio"


def test_a_run_sets_the_timer_and_puts_it_back(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    boards = Boards("/dev/ttyUSB0", "/dev/ttyACM0", sysfs=str(sysfs), latency_timer_ms=1)
    assert boards.latency_timer_problem() is None
    assert boards.warnings() == []                  # the run will have 1 ms
    boards.open(RunConfig(mode="mixed"))
    assert timer_file(sysfs).read_text().strip() == "1"
    boards.close()
    assert timer_file(sysfs).read_text().strip() == "16"
    ident = boards.identity()
    assert ident["usb_latency_timer_ms"] == {"profiler": 1, "executor": None}
    assert ident["latency_timer_set"] == {"ms": 1, "before_ms": {"profiler": 16}, "restored": True}
    assert ident["usb_drivers"] == {"profiler": "ftdi_sio", "executor": "cdc_acm"}
    boards.close()                                   # twice: nothing more
    assert timer_file(sysfs).read_text().strip() == "16"


def test_setting_needs_an_ftdi_port_and_the_right_to_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sysfs = fake_sysfs(tmp_path)
    none = Boards("/dev/ttyACM0", "/dev/ttyUSB1", sysfs=str(sysfs), latency_timer_ms=1).latency_timer_problem()
    assert none is not None and "no FTDI port" in none
    monkeypatch.setattr(usbserial.os, "access", lambda path, mode: False)     # not root, no udev rule
    boards = Boards("/dev/ttyUSB0", "/dev/ttyACM0", sysfs=str(sysfs), latency_timer_ms=1)
    why = boards.latency_timer_problem()
    assert why is not None and "not writable" in why and "udev rule" in why
    with pytest.raises(EndpointError) as exc:
        boards.open(RunConfig(mode="mixed"))
    assert exc.value.code == "latency_timer"
    assert timer_file(sysfs).read_text().strip() == "16"


def test_a_16_ms_timer_warns_once_saying_what_it_costs(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    [warning] = Boards("/dev/ttyUSB0", "/dev/ttyACM0", sysfs=str(sysfs)).warnings()
    assert "16 ms latency timer" in warning.text and "8 ms on average" in warning.text
    assert "slack shrinks" in warning.text and "--latency-timer 1" in warning.text


def test_mmrig_run_latency_timer_sets_it_for_the_run_and_restores_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sysfs = fake_sysfs(tmp_path)
    monkeypatch.setattr(endpoints, "Boards", functools.partial(Boards, sysfs=str(sysfs)))
    seen: list[str] = []
    real_open = Boards.open

    def open_and_look(self: Boards, cfg: RunConfig):   # what the timer is while the run holds the ports
        ports = real_open(self, cfg)
        seen.append(timer_file(sysfs).read_text().strip())
        return ports

    monkeypatch.setattr(Boards, "open", open_and_look)
    link = by_id_link(tmp_path, "ttyUSB0")          # a file, not a port: the run stops at opening it
    assert cli.main(["run", "--mode", "normal", "--count", "1", "--profiler", str(link), "--latency-timer", "1"]) == 2
    assert seen == ["1"]
    assert timer_file(sysfs).read_text().strip() == "16"
    assert not [line for line in capsys.readouterr().err.splitlines() if "WARNING" in line]   # 1 ms: nothing to say


@pytest.mark.parametrize("argv, word", [(["--latency-timer", "0"], "--latency-timer"),
                                        (["--latency-timer", "256"], "--latency-timer"),
                                        (["--latency-timer", "1", "--unpaced"], "--line ftdi:latency")])
def test_mmrig_run_refuses_a_bad_latency_timer(argv: list[str], word: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        status = cli.main(["run", "--mode", "mixed", "--count", "1", *argv])
    except SystemExit as exc:                       # (a bad value: argparse's exit)
        status = exc.code
    assert status == 2
    assert word in capsys.readouterr().err

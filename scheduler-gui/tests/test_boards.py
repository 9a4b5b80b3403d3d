"""`mmrig boards`, the board-agnostic part (mmsched.run.boards): the HELLO in words, a board's HELLO against its
image's, the USB-serial latency on a fake sysfs tree, the exit codes, and a HELLO read from a fake Mega
whose port's open resets it. Against the bench: hil/tests/test_boards_bench.py."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

import mmproto as mp
from mmsched.run import boards as b
from mmrig import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "protocol" / "python" / "tests"))
from fake_arduino import FakeArduino  # noqa: E402

PROFILER = mp.Hello(mp.PROTO_VERSION, mp.NodeKind.PROFILER, 0x0200, 16_000_000, 16_000_000, 1_137_778, 9600,
                    mp.HELLO_FLAG_CAPTURE | mp.HELLO_FLAG_HIST, 2)
EXECUTOR = mp.Hello(mp.PROTO_VERSION, mp.NodeKind.EXECUTOR, 0x0600, 16_000_000, 250_000, 17_778, 9600, 0, 2)
IMAGES = {"profiler": ("profiler.elf", dataclasses.replace(PROFILER, reset_cause=1)),
          "executor": ("executor.elf", dataclasses.replace(EXECUTOR, reset_cause=1))}


def fake_sysfs(root: Path) -> Path:
    sysfs = root / "sys"
    for name, ms in (("ttyUSB0", "16\n"), ("ttyUSB1", "1\n")):
        (sysfs / "bus/usb-serial/devices" / name).mkdir(parents=True)
        (sysfs / "bus/usb-serial/devices" / name / "latency_timer").write_text(ms)
    return sysfs


def test_hello_in_words() -> None:
    w = b.hello_words(EXECUTOR)
    assert w == {"node": "executor", "protocol": mp.PROTO_VERSION, "firmware": "6.0", "cpu_hz": 16_000_000,
                 "timer_hz": 250_000, "tick_ms": 71.112, "baud": 9600, "flags": 0, "reset_cause": "external"}
    assert b.hello_words(dataclasses.replace(PROFILER, reset_cause=0))["reset_cause"] == "not told"


def test_a_board_whose_hello_is_its_images_but_for_the_reset_cause_matches() -> None:
    assert b.differences(PROFILER, IMAGES["profiler"][1]) == {}


def test_old_firmware_and_another_baud_build_are_lines_of_what_to_fix() -> None:
    old = dataclasses.replace(PROFILER, fw_version=0x0009, baud=19200)
    diff = b.differences(old, IMAGES["profiler"][1])
    assert diff == {"fw_version": (9, 0x0200), "baud": (19200, 9600)}
    fixes = b.mismatch_fixes("/dev/ttyACM0", "profiler", diff)
    assert len(fixes) == 2
    assert "firmware 0.9, the build is 2.0" in fixes[0] and "make flash-profiler PORT=/dev/ttyACM0" in fixes[0]
    assert "built for 19200 baud" in fixes[1] and "BAUD=19200" in fixes[1]


def test_latency_ftdi_above_1_ms_says_how_to_set_it_acm_is_fixed(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path)
    slow = b.latency("/dev/ttyUSB0", sysfs)
    assert (slow.kind, slow.ms) == ("ftdi", 16)
    assert "set 1 ms" in slow.fix and "echo 1 | sudo tee" in slow.fix and "ttyUSB0/latency_timer" in slow.fix
    assert b.latency("/dev/ttyUSB1", sysfs) == b.Latency("ftdi", 1, None)
    acm = b.latency("/dev/ttyACM0", sysfs)
    assert (acm.kind, acm.ms, acm.fix) == ("acm", 4.1, None) and "fixed" in acm.note
    assert b.latency("socket://host:1", sysfs) == b.Latency("none", None, None)


def test_report_exit_codes_and_text() -> None:
    good = [b.PortCheck("/dev/ttyACM0", PROFILER, image=IMAGES["profiler"][1], image_path="p.elf"),
            b.PortCheck("/dev/ttyACM1", EXECUTOR, image=IMAGES["executor"][1], image_path="e.elf")]
    r = b.Report(good, self_test=b.SelfTest(5, on_time=5, valid=True, outcomes={"ok": 5}))
    assert r.exit_code() == b.EXIT_OK and r.fixes() == []
    out = b.text(r)
    assert "nothing to fix" in out and "5 of 5 events on time" in out and "same" in out
    assert out.splitlines()[0].split()[:3] == ["port", "node", "protocol"]
    late = b.Report(good, self_test=b.SelfTest(5, on_time=3, valid=True, outcomes={"ok": 3, "late": 2}))
    assert late.exit_code() == b.EXIT_FIX and "3 of 5 events on time" in late.fixes()[0]
    one = b.Report(good[:1])
    assert one.exit_code() == b.EXIT_FIX and one.fixes() == ["no executor answered on /dev/ttyACM0"]
    assert b.Report([]).exit_code() == b.EXIT_FIX
    doc = json.loads(json.dumps(r.as_dict()))
    assert doc["exit"] == 0 and doc["ports"][0]["role"] == "profiler" and doc["ports"][0]["matches_image"] is True


def test_expect_line_match_mismatch_and_no_answer() -> None:
    ok = b.PortCheck("/dev/ttyACM0", PROFILER, image=IMAGES["profiler"][1], image_path="p.elf")
    assert b.expect_line(ok) == (0, "/dev/ttyACM0: profiler firmware 2.0, 9600 baud, 16000000 Hz: matches p.elf")
    bad = dataclasses.replace(ok, diff={"baud": (19200, 9600)})
    code, line = b.expect_line(bad)
    assert code == 1 and "MISMATCH" in line and "baud board 19200 image 9600" in line
    assert b.expect_line(b.PortCheck("/dev/ttyACM0", error="no HELLO within 5.0 s"))[0] == 1


def test_check_port_reads_a_reset_megas_boot_hello_and_compares_it(tmp_path: Path) -> None:
    with FakeArduino(dataclasses.replace(PROFILER, fw_version=0x0009)) as node:
        c = b.check_port(node.path, IMAGES, sysfs=fake_sysfs(tmp_path))
        assert node.held == 0 and node.got == []       # listened, never asked: its boot HELLO came
    assert c.role == "profiler" and c.diff == {"fw_version": (9, 0x0200)}
    assert len(c.fixes) == 1 and "flash" in c.fixes[0]


def test_check_port_takes_the_other_kind_without_complaint() -> None:
    with FakeArduino(EXECUTOR) as node:
        c = b.check_port(node.path, IMAGES)
    assert c.role == "executor" and c.diff == {} and c.fixes == []


def test_a_silent_port_is_a_line_to_fix() -> None:
    c = b.check_port("loop://", IMAGES, reset_on_open=False, timeout_s=0.6)
    assert c.hello is None and "no answer at 9600 baud" in c.fixes[0]


@pytest.mark.parametrize("argv, word", [
    (["--arduino"], "--arduino"),
    (["--bench", "/dev/null"], "not both"),
    (["--expect-image", "x.elf"], "--port"),
    (["/dev/mmrig-no-such-port"], "no such port"),
    (["a", "b", "c"], "at most two"),
    (["--count", "0", "loop://"], "--count"),
    (["--bench", "--no-reset-on-open"], "--no-reset-on-open"),
    (["--bench", "--baud", "0"], "--baud must be a rate in hundreds of baud"),     # exited 0: "all well"
])
def test_usage_errors_are_one_line_and_exit_2(capsys, argv: list[str], word: str) -> None:
    assert cli.main(["boards", *argv]) == b.EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mmrig boards: ") and word in err[0]


def test_help_documents_the_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["boards", "--help"])
    out = capsys.readouterr().out
    assert "exit status:" in out and "0  every port answered" in out and "2  usage error" in out


def test_list_ports_gives_device_description_vid_pid_and_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    from serial.tools import list_ports
    from serial.tools.list_ports_common import ListPortInfo

    mega = ListPortInfo("/dev/ttyACM0")
    mega.description, mega.vid, mega.pid, mega.serial_number = "Arduino Mega 2560", 0x2341, 0x0042, "7563331"
    uart = ListPortInfo("/dev/ttyS0")
    monkeypatch.setattr(list_ports, "comports", lambda: [uart, mega])
    assert b.list_ports() == [b.PortInfo("/dev/ttyACM0", "Arduino Mega 2560", "2341:0042", "7563331"),
                              b.PortInfo("/dev/ttyS0", "n/a", None, None)]


def test_mmrig_boards_without_ports_checks_each_usb_port_listed(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """Two fake Megas (their open resets them) listed as USB ports, a UART that is not: the Megas are
    identified by their boot HELLO and compared with the checkout's built images."""
    from mmhil.bench import ensure_built

    ensure_built()
    with FakeArduino(PROFILER) as p, FakeArduino(EXECUTOR) as e:
        monkeypatch.setattr(b, "list_ports", lambda: [b.PortInfo(p.path, "Arduino Mega 2560", "2341:0042", "1"),
                                                      b.PortInfo(e.path, "Arduino Mega 2560", "2341:0042", "2"),
                                                      b.PortInfo("/dev/ttyS0", "n/a", None, None)])
        code = cli.main(["boards", "--no-self-test", "--json"])
        assert p.held == 0 and e.held == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["role"] for c in doc["ports"]] == ["profiler", "executor"]
    assert doc["ports"][0]["usb"]["vid_pid"] == "2341:0042"
    assert any("/dev/ttyS0" in n and "not checked" in n for n in doc["notes"])
    assert all(c["matches_image"] for c in doc["ports"]), doc["fixes"]
    assert code == 0 and doc["exit"] == 0


def test_a_timeout_not_above_0_is_refused(capsys) -> None:
    """--timeout -1 read NO ANSWER for a live bench: refused by the option's parser (exit 2, one line)."""
    for bad in ("-1", "0", "nan"):
        with pytest.raises(SystemExit) as exc:
            cli.main(["boards", "--bench", "--timeout", bad])
        assert exc.value.code == 2
        assert "--timeout: must be > 0" in capsys.readouterr().err

"""`mmrig boards` against the virtual bench (non-Arduino: its ptys reset nothing), and the image-HELLO
reader (mmhil.images: the image run alone in the bench's one-node mode)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mmproto as mp
from mmhil import Bench, images
from mmhil.bench import EXECUTOR_ELF, PROFILER_ELF, PROFILER_IHX, ensure_built
from mmrig import cli


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


def test_each_built_image_says_its_own_boot_hello() -> None:
    p = images.boot(PROFILER_ELF)
    assert p.role == "profiler" and p.hello.node_kind == mp.NodeKind.PROFILER
    assert (p.hello.proto_version, p.hello.cpu_hz, p.hello.baud) == (mp.PROTO_VERSION, 16_000_000, 9600)
    assert p.hello.reset_cause == mp.ResetCause.POWER_ON and p.frames[0] == p.hello
    e = images.boot(EXECUTOR_ELF)
    assert e.role == "executor" and e.hello.node_kind == mp.NodeKind.EXECUTOR and e.hello.timer_hz == 250_000
    # the executor's status LED (PB7) blinks idle: 496 ms half period (executor/port/avr/main.c)
    toggles = [c for c, _ in e.led[2:]]
    assert toggles and all(abs((b - a) / 16_000 - 496) < 1 for a, b in zip(toggles, toggles[1:]))


def test_a_hex_image_is_read_through_the_elf_beside_it_and_other_files_are_refused(tmp_path: Path) -> None:
    hex_file = PROFILER_ELF.with_suffix(".hex")
    if hex_file.exists():
        assert images.boot_hello(hex_file) == images.boot_hello(PROFILER_ELF)
    with pytest.raises(images.ImageError, match="not an ELF"):
        images.elf_of(Path(__file__))
    with pytest.raises(images.ImageError, match="not an AVR image"):
        images.elf_of(Path(sys.executable).resolve())
    lone = tmp_path / "lone.hex"
    lone.write_text(":00000001FF\n")
    with pytest.raises(images.ImageError, match="no lone.elf beside it"):
        images.elf_of(lone)


@pytest.mark.paced
def test_boards_on_the_bench_find_both_nodes_matching_their_images(capsys) -> None:
    assert cli.main(["boards", "--bench", "--no-self-test", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["role"] for p in doc["ports"]] == ["profiler", "executor"]
    assert all(p["matches_image"] and p["latency"]["kind"] == "none" for p in doc["ports"])
    assert doc["fixes"] == [] and doc["exit"] == 0


@pytest.mark.paced
def test_boards_self_test_runs_events_through_the_runner(capsys) -> None:
    code = cli.main(["boards", "--bench", "--count", "4", "--json"])
    doc = json.loads(capsys.readouterr().out)
    st = doc["self_test"]
    assert st["count"] == 4 and sum(st["outcomes"].values()) == 4
    # (a paced bench: a host stall can make the run invalid, which must then be a line to fix)
    assert code == (0 if st["ok"] else 1) and (st["ok"] or doc["fixes"])
    assert st["ok"], f"re-run once before believing it: {st}"


@pytest.mark.paced
def test_given_ports_and_expect_image_match_and_mismatch(tmp_path: Path, capsys) -> None:
    with Bench(run_dir=tmp_path / "run") as bench:
        args = ["boards", bench.profiler_port, bench.executor_port, "--no-reset-on-open", "--no-self-test"]
        assert cli.main(args) == 0
        out = capsys.readouterr().out
        assert "nothing to fix" in out and out.count(" same ") == 2
        assert cli.main(["boards", "--port", bench.profiler_port, "--no-reset-on-open",
                         "--expect-image", str(PROFILER_ELF)]) == 0
        assert capsys.readouterr().out.strip().endswith(f"matches {PROFILER_ELF}")
        # another build's image (here: the other node's) is a mismatch, field by field, on one line
        assert cli.main(["boards", "--port", bench.profiler_port, "--no-reset-on-open",
                         "--expect-image", str(EXECUTOR_ELF)]) == 1
        line = capsys.readouterr().out.strip()
        assert len(line.splitlines()) == 1 and "MISMATCH" in line and "node_kind board 1 image 2" in line


def test_an_unreadable_image_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert cli.main(["boards", "--port", "loop://", "--expect-image", str(tmp_path / "none.elf")]) == 2
    assert capsys.readouterr().err.startswith("mmrig boards: ")


IHX51 = PROFILER_IHX    # the 8051 image, found as the bench finds it


@pytest.mark.skipif(not images.RUN51.exists() or not IHX51.exists(),
                    reason="ucsim's 8051 core (tools/ucsim.sh, make -C hil mcs51) or the 8051 image is not built")
@pytest.mark.paced
def test_the_8051_image_says_its_boot_hello_on_the_8051_core(capsys) -> None:
    """The flash targets of the 8051 boards verify against the .ihx they wrote: it runs alone on
    ucsim's core. The AVR profiler of the bench is not that image: every clock field differs."""
    hello = images.boot_hello(IHX51)
    assert (hello.node_kind, hello.cpu_hz, hello.timer_hz, hello.tick_counts, hello.baud) == (
        mp.NodeKind.PROFILER, 11_059_200, 921_600, 65_536, 9600)
    assert cli.main(["boards", "--bench", "--expect-image", str(IHX51)]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "cpu_hz board 16000000 image 11059200" in out

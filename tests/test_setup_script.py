"""tools/setup.sh and tools/fetch_freertos.sh, at the shell: the root step (`--system`, earlier `--debian-only`)
installs the same Debian packages whatever root's own PATH holds, and a student's setup uses the machine's
shared FreeRTOS kernel without cargo (docs/install-offline.md, "A class")."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fake_cargo(folder: Path) -> Path:
    """A `cargo` that records that it was called and fails (as root's rustup cargo, or a student's that cannot
    reach the crates index)."""
    folder.mkdir(parents=True, exist_ok=True)
    cargo = folder / "cargo"
    cargo.write_text(f'#!/bin/sh\necho called >> "{folder}/cargo-called"\nexit 1\n')
    cargo.chmod(0o755)
    return folder


def apt_list(*args: str, path: str, shared: Path) -> list[str]:
    env = {**os.environ, "PATH": path, "MMRIG_FREERTOS_SYSTEM": str(shared)}
    done = subprocess.run([str(ROOT / "tools/setup.sh"), "--print-apt-packages", *args], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_root_step_wants_debians_cargo_whatever_roots_path_holds(tmp_path: Path) -> None:
    with_cargo = f"{fake_cargo(tmp_path / 'bin')}:/usr/bin:/bin"
    for flag in ("--system", "--debian-only"):
        assert "cargo" in apt_list(flag, path=with_cargo, shared=tmp_path / "none")
        assert "cargo" in apt_list(flag, path="/usr/bin:/bin", shared=tmp_path / "none")
    # from a bundle nothing needs cargo: the bundle holds the crate (and tools/bundle.sh gathers this list)
    assert "cargo" not in apt_list("--system", "--offline", str(tmp_path / "b"), path=with_cargo,
                                   shared=tmp_path / "none")
    assert "cargo" not in apt_list("--offline", str(tmp_path / "b"), path="/usr/bin:/bin", shared=tmp_path / "none")
    assert "simavr" in apt_list("--system", path=with_cargo, shared=tmp_path / "none")


def fake_kernel(shared: Path) -> Path:
    """A FreeRTOS-Kernel tree with the files fetch_freertos.sh checks, as the root step leaves it."""
    kernel = shared / "freertos-next-0.12.0" / "FreeRTOS-Kernel"
    for f in ("tasks.c", "queue.c", "list.c", "include/FreeRTOS.h", "portable/ThirdParty/GCC/ATmega/port.c"):
        (kernel / f).parent.mkdir(parents=True, exist_ok=True)
        (kernel / f).write_text("/* */\n")
    (kernel / "include/task.h").write_text('#define tskKERNEL_VERSION_NUMBER "V11.2.0"\n')
    return kernel


def test_a_student_links_the_shared_kernel_and_never_runs_cargo(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "tools").mkdir(parents=True)
    shutil.copy2(ROOT / "tools/fetch_freertos.sh", clone / "tools/fetch_freertos.sh")
    bin_dir = fake_cargo(tmp_path / "bin")
    shared = tmp_path / "shared"
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "MMRIG_FREERTOS_SYSTEM": str(shared)}
    fetch = [str(clone / "tools/fetch_freertos.sh")]
    assert subprocess.run([*fetch, "--available"], env=env, timeout=60).returncode == 1
    kernel = fake_kernel(shared)
    assert subprocess.run([*fetch, "--available"], env=env, timeout=60).returncode == 0
    # a student with no kernel yet: a cargo that is never called, as a normal user's setup, online or offline
    done = subprocess.run(fetch, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "shared copy" in done.stdout
    assert (clone / "build/freertos/kernel").resolve() == kernel.resolve()
    (clone / "build/freertos/kernel").unlink()
    done = subprocess.run([*fetch, "--offline", str(tmp_path / "no-bundle")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert (clone / "build/freertos/kernel").resolve() == kernel.resolve()
    assert not (bin_dir / "cargo-called").exists()
    # and setup asks for no cargo package once the shared kernel is there
    assert "cargo" not in apt_list(path="/usr/bin:/bin", shared=shared)

"""Every file of a run is created one way (mmanalysis.safefiles): a name another user planted in a shared
folder -- a symlink to a file of ours, a dangling one -- is replaced or refused, never written through."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from mmanalysis import safefiles
from mmanalysis.safefiles import (atomic_write, check_private_dir, create_new, existing, move_into, umask,
                                  replacing)

NOBODY = 65534


def plant(link: Path, victim: Path) -> None:
    """The attack: LINK -> VICTIM, as another user planted it (as root, the link is given to nobody)."""
    link.symlink_to(victim)
    if os.getuid() == 0:
        os.lchown(link, NOBODY, NOBODY)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "mine" / "victim.txt"
    v.parent.mkdir()
    v.write_text("precious\n")
    return v


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_atomic_write_replaces_a_planted_link_and_leaves_its_target_alone(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "lab.csv"
    plant(out, victim)
    atomic_write(out, b"new\n")
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and out.read_bytes() == b"new\n"
    assert temps(tmp_path) == []


def test_atomic_write_over_a_dangling_link_creates_nothing_where_it_points(tmp_path: Path) -> None:
    out, nowhere = tmp_path / "lab.hist", tmp_path / "mine" / "created-through-the-link"
    plant(out, nowhere)
    atomic_write(out, b"x")
    assert not os.path.lexists(nowhere) and out.read_bytes() == b"x" and not out.is_symlink()


def test_replacing_streams_into_a_new_temp_beside_the_target_and_renames_it_over_on_close(
        tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "lab.perfetto-trace"
    plant(out, victim)
    plant(tmp_path / "lab.perfetto-trace.tmp", victim)        # the predictable name a writer once used
    with replacing(out) as f:
        f.write(b"part one, ")
        names = temps(tmp_path)
        assert len(names) == 2 and any(n.startswith(".lab.perfetto-trace.") for n in names), names
        assert out.is_symlink()                                 # the target is untouched until the end
        f.write(b"part two")
    assert victim.read_text() == "precious\n"
    assert out.read_bytes() == b"part one, part two" and not out.is_symlink()
    assert temps(tmp_path) == ["lab.perfetto-trace.tmp"]        # only the planted one: ours is gone


def test_replacing_removes_its_temp_and_keeps_the_target_when_the_writer_fails(tmp_path: Path) -> None:
    out = tmp_path / "lab.json"
    out.write_text("before\n")
    with pytest.raises(RuntimeError):
        with replacing(out) as f:
            f.write(b"half")
            raise RuntimeError("writer failed")
    assert out.read_text() == "before\n" and temps(tmp_path) == []


def test_replacing_gives_the_file_the_mode_the_umask_says(tmp_path: Path) -> None:
    # as any new file of the user's (0666 less the umask), not mkstemp's 0600: run files are shared as a lab's
    # files are; a user who wants them private says so with the umask
    old = os.umask(0o022)
    try:
        assert umask() == 0o022
        with replacing(tmp_path / "lab.csv") as f:
            f.write(b"x")
        atomic_write(tmp_path / "lab.json", b"{}")
        os.umask(0o077)
        assert umask() == 0o077
        atomic_write(tmp_path / "private.csv", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "lab.csv").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "lab.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "private.csv").stat().st_mode) == 0o600


def test_move_into_gives_the_file_the_mode_the_umask_says(tmp_path: Path) -> None:
    src = tmp_path / "run" / "exectrace.txt"       # as the bench makes it in its private run folder: 0600
    src.parent.mkdir()
    src.write_text("trace\n")
    src.chmod(0o600)
    old = os.umask(0o022)
    try:
        dest = move_into(src, tmp_path / "lab.exectrace")
    finally:
        os.umask(old)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644


def test_move_into_renames_over_a_planted_link(tmp_path: Path, victim: Path) -> None:
    src, dest = tmp_path / "run" / "exectrace.txt", tmp_path / "lab.exectrace"
    src.parent.mkdir()
    src.write_text("trace\n")
    plant(dest, victim)
    assert move_into(src, dest) == dest
    assert victim.read_text() == "precious\n" and dest.read_text() == "trace\n" and not src.exists()


def test_move_into_across_file_systems_copies_through_a_temp_never_through_a_planted_link(
        tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, dest = tmp_path / "run" / "exectrace.txt", tmp_path / "lab.exectrace"
    src.parent.mkdir()
    src.write_text("trace\n")
    plant(dest, victim)
    real_rename = os.rename
    calls = []

    def cross_device(a: object, b: object, **dir_fds: int) -> None:   # the first rename is the one across file systems
        calls.append((a, b))
        if len(calls) == 1:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        real_rename(a, b, **dir_fds)

    monkeypatch.setattr(safefiles.os, "rename", cross_device)
    move_into(src, dest)
    assert victim.read_text() == "precious\n"
    assert dest.read_text() == "trace\n" and not dest.is_symlink() and not src.exists()
    assert temps(tmp_path) == []


def test_move_into_a_link_to_a_directory_replaces_the_link_not_moving_into_that_directory(
        tmp_path: Path, victim: Path) -> None:
    src, dest = tmp_path / "run" / "exectrace.txt", tmp_path / "lab.exectrace"
    src.parent.mkdir()
    src.write_text("trace\n")
    plant(dest, victim.parent)
    move_into(src, dest)
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]
    assert dest.read_text() == "trace\n" and not dest.is_symlink()


def test_existing_counts_a_dangling_link_and_only_names_that_are_taken(tmp_path: Path) -> None:
    plant(tmp_path / "a.vcd", tmp_path / "nowhere")
    (tmp_path / "b.csv").write_text("")
    paths = [tmp_path / "a.vcd", tmp_path / "b.csv", tmp_path / "c.json"]
    assert existing(paths) == [tmp_path / "a.vcd", tmp_path / "b.csv"]


def test_create_new_refuses_a_planted_link_and_creates_a_fresh_file(tmp_path: Path, victim: Path) -> None:
    plant(tmp_path / "bench.log", victim)
    with pytest.raises(FileExistsError):
        create_new(tmp_path / "bench.log")
    assert victim.read_text() == "precious\n"
    with create_new(tmp_path / "final_status.json") as f:
        f.write(b"{}")
    assert (tmp_path / "final_status.json").read_bytes() == b"{}"
    with pytest.raises(FileExistsError):
        create_new(tmp_path / "final_status.json")


def test_a_private_dir_is_made_0700_when_missing(tmp_path: Path) -> None:
    d = tmp_path / "a" / "run"
    assert check_private_dir(d) is None
    assert d.is_dir() and stat.S_IMODE(d.stat().st_mode) == 0o700
    assert check_private_dir(d) is None                        # ours, and nobody else's to write: taken again


def test_a_dir_that_is_a_link_a_file_shared_or_anothers_is_refused_in_mmbenchs_words(
        tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "link"
    plant(link, victim.parent)
    assert check_private_dir(link) == (f"run directory {link} is not a directory (a symlink or a file): refused")
    assert check_private_dir(victim) == (f"run directory {victim} is not a directory (a symlink or a file): refused")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    assert check_private_dir(shared) == (f"run directory {shared} is writable by group or others (mode 1777): "
                                         "refused")
    if os.getuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, NOBODY, NOBODY)
        assert check_private_dir(theirs) == (f"run directory {theirs} is owned by uid {NOBODY}, not by this user "
                                             f"(uid 0): refused")


def fifo(path: Path) -> Path:
    """A FIFO planted at PATH (opening it to write would block until someone reads)."""
    os.mkfifo(path)
    if os.getuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    return path


@pytest.mark.timeout(20)
@pytest.mark.parametrize("write", [
    lambda p: atomic_write(p, b"x"),
    lambda p: os.close(safefiles.stream(p, b"header\n")),
    lambda p: os.close(safefiles.appending(p)),
], ids=["atomic_write", "stream", "appending"])
def test_a_fifo_at_an_output_name_is_refused_at_once_and_left_alone(tmp_path: Path, write) -> None:
    out = fifo(tmp_path / "lab.partial.csv")
    with pytest.raises(safefiles.RefusedOutput, match=r"lab.partial.csv is a FIFO, not a file: refused"):
        write(out)
    assert stat.S_ISFIFO(out.lstat().st_mode) and temps(tmp_path) == []


def test_move_into_refuses_a_fifo_at_its_name(tmp_path: Path) -> None:
    src = tmp_path / "run" / "exectrace.txt"
    src.parent.mkdir()
    src.write_text("trace\n")
    with pytest.raises(safefiles.RefusedOutput, match="is a FIFO"):
        move_into(src, fifo(tmp_path / "lab.exectrace"))
    assert src.read_text() == "trace\n"


def test_a_folder_planted_as_a_link_is_refused_and_nothing_lands_where_it_points(tmp_path: Path,
                                                                                  victim: Path) -> None:
    plant(tmp_path / "figures", victim.parent)
    for write in (lambda p: atomic_write(p, b"x"), lambda p: os.close(safefiles.stream(p)),
                  lambda p: os.close(safefiles.appending(p))):
        with pytest.raises(safefiles.RefusedOutput, match=r"figures is a symbolic link, not a folder: refused"):
            write(tmp_path / "figures" / "victim.txt")
    with pytest.raises(safefiles.RefusedOutput):
        safefiles.output_folder(tmp_path / "figures")
    with pytest.raises(safefiles.RefusedOutput):
        safefiles.subfolder(tmp_path / "figures")
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]
    assert victim.read_text() == "precious\n"


def test_stream_replaces_a_planted_link_and_keeps_writing_into_its_own_file(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "lab.partial.csv"
    plant(out, victim)
    fd = safefiles.stream(out, b"header\n")
    try:
        assert not out.is_symlink() and out.read_bytes() == b"header\n"     # the name is the run's at once
        os.write(fd, b"row\n")
    finally:
        os.close(fd)
    assert out.read_bytes() == b"header\nrow\n" and victim.read_text() == "precious\n"
    assert temps(tmp_path) == []


def test_appending_refuses_a_link_and_keeps_what_a_file_holds(tmp_path: Path, victim: Path) -> None:
    plant(tmp_path / "points.jsonl", victim)
    with pytest.raises(safefiles.RefusedOutput, match="is a symbolic link, not a file"):
        safefiles.appending(tmp_path / "points.jsonl")
    assert victim.read_text() == "precious\n"
    mine = tmp_path / "mine.jsonl"
    for line in (b"one\n", b"two\n"):
        fd = safefiles.appending(mine)
        os.write(fd, line)
        os.close(fd)
    assert mine.read_bytes() == b"one\ntwo\n"


def test_folders_are_never_made_on_the_way(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such folder"):
        atomic_write(tmp_path / "a" / "b" / "x.csv", b"x")
    with pytest.raises(FileNotFoundError, match=r"no such folder: .*/a \(make it first\)"):
        safefiles.output_folder(tmp_path / "a" / "b")
    assert not (tmp_path / "a").exists()
    assert safefiles.output_folder(tmp_path / "a") == tmp_path / "a" and (tmp_path / "a").is_dir()
    assert safefiles.subfolder(tmp_path / "a" / "figures").is_dir()


@pytest.mark.skipif(os.getuid() != 0, reason="another user's folder needs root to make")
def test_a_subfolder_another_user_made_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "figures"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(safefiles.RefusedOutput, match=f"made by uid {NOBODY}, not by this user"):
        safefiles.subfolder(theirs)


def test_output_problem_says_what_stops_a_file_and_leaves_nothing(tmp_path: Path, victim: Path) -> None:
    assert safefiles.output_problem(tmp_path / "x.csv") is None
    assert safefiles.output_problem(tmp_path / "no" / "x.csv") == f"no such folder: {tmp_path / 'no'}"
    assert "is a FIFO" in safefiles.output_problem(fifo(tmp_path / "f.csv"))
    assert safefiles.output_problem(victim.parent) == f"{victim.parent} is a folder"
    plant(tmp_path / "link", victim.parent)
    assert "is a symbolic link, not a folder" in safefiles.output_problem(tmp_path / "link" / "x.csv")
    assert temps(tmp_path) == [] and not (tmp_path / "x.csv").exists()

"""An argument error of any `mmrig` command is one line on stderr naming the option and an example of what it
takes, exit 2 (`mmrig run -D 5x` printed 17 lines of usage before the reason, an unknown option 4); `--help` is
argparse's own, whole."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from test_cli_help_text import options

MMRIG = [sys.executable, "-m", "mmrig"]

# (argv, words the one line must hold)
ERRORS = [
    (["run", "-D", "5x"], ["mmrig run: -D/--duration: not a time: '5x'", "e.g. -D 90s"]),
    (["run", "--foo"], ["mmrig run: --foo: no such option", "mmrig run --help"]),
    (["run", "--dispach", "isr"], ["mmrig run: --dispach: no such option", "did you mean --dispatch isr?"]),
    (["run", "--mode", "fast"], ["mmrig run: --mode: invalid choice: 'fast'", "e.g. --mode mixed"]),
    (["run", "-l"], ["mmrig run: -l/--count: expected one argument", "e.g. -l"]),
    (["run", "-i", "1", "--rate", "1"], ["--rate: not allowed with argument -i/--interval"]),
    (["run", "-b", "x"], ["-b/--break-us: not a number: 'x'", "e.g. -b 100"]),
    (["rn"], ["mmrig: no command 'rn'; did you mean mmrig run?"]),
    (["replay"], ["mmrig replay: run required", "e.g. mmrig replay runs/r.csv"]),
    (["sweep", "--count", "x"], ["mmrig sweep: -l/--count: invalid int value: 'x'", "e.g. -l"]),
    (["lab", "key", "--bogus"], ["mmrig lab key: --bogus: no such option"]),
    (["proto", "sizes", "--baud", "fast"], ["mmrig proto sizes: --baud: invalid int value", "e.g. --baud 9600"]),
]


@pytest.mark.parametrize("argv, words", ERRORS, ids=[" ".join(a) for a, _ in ERRORS])
def test_an_argument_error_is_one_line_with_the_option_and_an_example(argv: list[str], words: list[str]) -> None:
    done = subprocess.run([*MMRIG, *argv], capture_output=True, text=True, timeout=60)
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and done.stdout == "", done.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_help_is_argparse_own_and_whole() -> None:
    done = subprocess.run([*MMRIG, "run", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: mmrig run") and "exit codes" in done.stdout
    assert "-b US, --break-us US" in done.stdout and "-i US, --interval US" in done.stdout


@pytest.mark.parametrize("name, action", [(n, a) for n, a in options() if a.nargs != 0],
                         ids=[n for n, a in options() if a.nargs != 0])
def test_every_option_that_takes_a_value_has_an_example(name: str, action: argparse.Action) -> None:
    from mmrig.cli.parser import example_of

    example = example_of(action)
    assert example and (not action.option_strings or example.split()[0] in action.option_strings), (name, example)

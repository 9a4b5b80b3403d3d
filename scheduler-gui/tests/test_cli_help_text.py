"""Every option of every `mmrig` subcommand says what it does in `--help` (`--random-ids`, `--late-bound-us`,
`--max-in-flight` and `--mode verification` did not)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from mmrig.cli import build_parser


def commands(parser: argparse.ArgumentParser, path: str = "mmrig") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def options() -> list[tuple[str, argparse.Action]]:
    return [(f"{path} {'/'.join(a.option_strings) or a.dest}", a) for path, p in commands(build_parser())
            for a in p._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def test_every_subcommand_is_walked() -> None:
    walked = {path for path, _ in commands(build_parser())}
    assert {"mmrig run", "mmrig replay", "mmrig sweep", "mmrig proto sizes", "mmrig lab key", "mmrig report"} <= walked
    assert len(options()) > 100


@pytest.mark.parametrize("name, action", options(), ids=[n for n, _ in options()])
def test_every_option_has_help(name: str, action: argparse.Action) -> None:
    assert action.help and action.help.strip(), f"{name} has no help text"


def test_the_run_modes_are_each_explained() -> None:
    mode = next(a for a in dict(commands(build_parser()))["mmrig run"]._actions if "--mode" in a.option_strings)
    for word in ("mixed:", "normal:", "verification:"):
        assert word in mode.help, word

"""`mmrig`: the one command line of the rig. One module per subcommand, each registering its own options
(`add_parser`), the way pytest's plugins own theirs: proto, bench, report / profile / capture / lab key,
demo, run, explain, sweep, boards, gui."""

from __future__ import annotations

import argparse
import os
import sys

from mmrig import __version__

from . import analysis, bench, boards, demo, explain, gui, proto, replay, run, sweep
from .parser import MmrigParser, parse

SUBCOMMANDS = (proto, bench, analysis, demo, run, explain, replay, sweep, boards, gui)


def build_parser() -> argparse.ArgumentParser:
    parser = MmrigParser(prog="mmrig", description="mixed-mode real-time test rig")
    parser.add_argument("--version", action="version", version=f"mmrig {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


EXIT_PIPE = 141         # 128 + SIGPIPE, what a shell reports for a command whose reader went away


def main(argv: list[str] | None = None) -> int:
    args = parse(build_parser(), argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        # the reader of stdout went away (`mmrig replay RUN | head -2`): no traceback; stdout to /dev/null so
        # that the interpreter's own flush at exit does not raise again (the Python docs' recipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE


if __name__ == "__main__":
    sys.exit(main())

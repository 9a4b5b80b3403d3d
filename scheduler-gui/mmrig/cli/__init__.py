"""`mmrig`: the one command line of the rig. One module per subcommand, each registering its own options
(`add_parser`), the way pytest's plugins own theirs: proto, bench, report / profile / capture / lab key,
demo, run, sweep, boards, gui."""

from __future__ import annotations

import argparse
import sys

from mmrig import __version__

from . import analysis, bench, boards, demo, gui, proto, replay, run, sweep

SUBCOMMANDS = (proto, bench, analysis, demo, run, replay, sweep, boards, gui)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mmrig", description="mixed-mode real-time test rig")
    parser.add_argument("--version", action="version", version=f"mmrig {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

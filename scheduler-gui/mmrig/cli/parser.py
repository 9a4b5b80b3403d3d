"""The mmrig parsers' argument errors: one line naming the option and an example of what it takes, exit 2.

argparse prints the whole usage before its reason (`mmrig run -D 5x`: 17 lines, the reason last, where a
terminal scrolls it away); cyclictest and latmus users expect one line. `--help` is argparse's own, unchanged."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from typing import NoReturn

from .options import duration_s, parse_interval, parse_rate, percent, positive_float, ppm

EXIT_USAGE = 2

# an example value by the option's type, where its name alone says what a value looks like
TYPE_EXAMPLES = {duration_s: "90s", parse_interval: "1ms", parse_rate: "50", percent: "99", ppm: "20",
                 positive_float: "100", int: "1", float: "1.5"}

# an example value by the option's name, for options whose type is a plain string or a path
NAME_EXAMPLES = {"--out": "runs/r", "-o": "runs/r", "--profiler": "/dev/ttyUSB0", "--executor": "/dev/ttyUSB1",
                 "--port": "/dev/ttyUSB0", "--baud": "115200", "--name": "r1", "--junit": "runs/r.xml",
                 "--hist": "runs/r.hist", "--fail-on": "late,missed", "--around": "worst", "--keep": "runs/replay",
                 "--rate": "50", "--interval": "1ms", "--distance": "1..4", "--dispatch": "isr,task",
                 "--load": "heavy", "--generation": "free", "--cluster": "tcp://lab-pc:8786", "--executor-load": "cpu",
                 "--vcd": "runs/bench.vcd", "--run-dir": "/tmp/bench", "--bootloader": "optiboot.hex",
                 "--run": "runs/r", "--perfetto": "runs/r.perfetto-trace", "--channels": "D0=timecode",
                 "--runs": "runs", "--out-dir": "demo", "--settings": "gui.json", "--expect-image": "executor.elf",
                 "--profiler-image": "profiler.elf", "--executor-image": "executor.elf", "--title": "'lab 3'",
                 "--bin-us": "10", "--hist-max-us": "1000", "--phases": "idle:1h,load=cpu:1h", "--count": "200", "--until": "10", "--latency-timer": "1",
                 "run": "runs/r.csv", "runs": "runs/r.csv", "trace": "runs/r.exectrace", "capture": "capture.sr",
                 "source": "capture.bin", "ports": "/dev/ttyUSB0"}


def example_of(action: argparse.Action, flag: str | None = None) -> str:
    """What to type for this option, flag included (its shortest, or `flag`): `-D 90s`, `--mode mixed`, `--json`;
    '' where none is known."""
    if flag is None:
        flag = min(action.option_strings, key=len) if action.option_strings else ""
    if action.nargs == 0:
        return flag
    names = [*action.option_strings, action.dest]
    value = None
    if action.choices:
        value = str(next(iter(action.choices)))
    elif action.default not in (None, "", [], False, argparse.SUPPRESS):   # what it is when not given
        value = " ".join(map(str, action.default)) if isinstance(action.default, list) else str(action.default)
    if value is None:
        value = next((NAME_EXAMPLES[n] for n in names if n in NAME_EXAMPLES), None)
    if value is None and action.type in TYPE_EXAMPLES:
        value = TYPE_EXAMPLES[action.type]          # type: ignore[index]
    if value is None:
        return ""
    return f"{flag} {value}" if flag else value


ARGUMENT = re.compile(r"argument (\S+?): (.*)", re.S)


class MmrigParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr, `PROG: OPTION: REASON (e.g. EXAMPLE)`, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {self.one_line(message)}\n")

    def one_line(self, message: str) -> str:
        message = " ".join(message.split())
        if message.startswith("unrecognized arguments: "):
            return self.unknown(message.removeprefix("unrecognized arguments: ").split())
        if (m := ARGUMENT.fullmatch(message)) is not None:
            names, reason = m.group(1).split("/"), m.group(2)
            action = next((a for a in self._actions if set(names) & {*a.option_strings, a.dest, a.metavar}), None)
            shown = "/".join(names) if action is None or not action.option_strings else "/".join(
                sorted(action.option_strings, key=len))
            if isinstance(action, argparse._SubParsersAction):
                word = re.search(r"invalid choice: '([^']*)'", reason)
                near = difflib.get_close_matches(word.group(1) if word else "", list(action.choices), n=1)
                return (f"no command {word.group(1) if word else ''!r}; did you mean {self.prog} "
                        f"{(near or list(action.choices))[0]}? ({self.prog} --help lists them)")
            example = example_of(action) if action is not None and "not allowed with" not in reason else ""
            return f"{shown}: {reason}" + (f"; e.g. {example}" if example else "")
        if message.startswith("the following arguments are required: "):
            missing = message.removeprefix("the following arguments are required: ").split(", ")
            names = {n for m in missing for n in m.split("/")}
            actions = [a for a in self._actions if {*a.option_strings, a.dest, a.metavar} & names]
            examples = [e for e in (example_of(a) for a in actions) if e]
            return f"{', '.join(missing)} required" + (f"; e.g. {self.prog} {' '.join(examples)}" if examples else "")
        return message

    def unknown(self, words: list[str]) -> str:
        """An option this command does not take (or a word too many), with the nearest it does take."""
        flags = [w for w in words if w.startswith("-")]
        if not flags:
            return f"unexpected {' '.join(words)} (see {self.prog} --help)"
        flag = flags[0].split("=", 1)[0]
        known = [s for a in self._actions for s in a.option_strings if s.startswith("--") == flag.startswith("--")]
        near = difflib.get_close_matches(flag, known, n=1, cutoff=0.7)   # --bogus is not --out
        action = self._option_string_actions.get(near[0]) if near else None
        hint = f"did you mean {example_of(action, near[0]) or near[0]}? " if action is not None else ""
        more = f" (and {' '.join(flags[1:])})" if len(flags) > 1 else ""
        return f"{flag}: no such option{more} ({hint}{self.prog} --help lists them)"


def parser_for(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The (sub)command's parser that argv reaches: `mmrig lab key --x` -> the parser of `mmrig lab key`."""
    for word in argv:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None:
            break
        if word in sub.choices:
            parser = sub.choices[word]
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """argv parsed; words no (sub)command takes are refused by the parser of the command they were given to,
    naming its own options, not by the top level's."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser_for(parser, argv).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


__all__ = ["MmrigParser", "example_of", "parse", "parser_for"]

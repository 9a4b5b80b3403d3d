"""`mmrig report`, `mmrig profile`, `mmrig capture` (their parsers and commands are mmanalysis's: no Qt, no
bench) and `mmrig lab key` (mmrig.labkey: it runs the bench through `mmrig run`)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    from mmanalysis.cli import add_capture_parser, add_profile_parser, add_report_parser

    from mmrig.labkey import add_lab_key_parser

    add_report_parser(sub)
    add_profile_parser(sub)
    add_capture_parser(sub)
    add_lab_key_parser(sub)

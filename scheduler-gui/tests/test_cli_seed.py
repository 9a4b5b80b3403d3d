"""mmrig run --seed N: the seed of the random event ids (RunConfig.seed), as the docs' "the same seed gives the
same CSV" says; default 1, as RunConfig's."""

from __future__ import annotations

from mmrig.cli import build_parser
from mmrig.cli.run import run_config


def test_seed_reaches_the_run_config() -> None:
    parser = build_parser()
    assert run_config(parser.parse_args(["run", "--random-ids", "--seed", "7"]), "run").seed == 7
    assert run_config(parser.parse_args(["run"]), "run").seed == 1

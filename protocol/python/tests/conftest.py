from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def spec_text() -> str:
    """protocol/SPEC.md, the text the tests hold the implementations to."""
    return (Path(__file__).resolve().parents[2] / "SPEC.md").read_text()

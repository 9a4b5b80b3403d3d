from __future__ import annotations

import pytest

from mmhil.bench import FIXTURE_ELF, ensure_built


@pytest.fixture(scope="session", autouse=True)
def built() -> None:
    ensure_built()  # the bench, the real images
    ensure_built(FIXTURE_ELF, FIXTURE_ELF)

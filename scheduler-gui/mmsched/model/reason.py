"""Why a run's figures cannot be trusted, as a structured code the GUI and a script can act on (the codes:
mmanalysis.schema.INVALID_REASONS) with the details in words for people. Every part of a run that can
invalidate it gives one: the endpoint's verdict, the rig's faults, the run's own checks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reason:
    """Why a run's figures cannot be trusted: a code (mmanalysis.schema.INVALID_REASONS) and the details."""

    code: str
    text: str

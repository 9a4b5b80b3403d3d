"""CSV cells safe to open in a spreadsheet (formula injection, OWASP "CSV Injection").

A cell that starts with = + - @ tab or carriage return is run as a formula by Excel, LibreOffice and Google
Sheets. Every CSV this project writes (the run CSV, the report's summary.csv and comparison.csv) passes its
cells through `neutralise`: such a text cell gets a leading single quote, which spreadsheets show as text.
Numbers stay numbers: a cell that is a valid number ("-3.5", "+1e-05", "-inf") is left alone, so reading our
own CSV back gives the same values. So is a lone "-" or "+": no spreadsheet can run one sign alone, and "-" is
the placeholder of a figure that does not exist (the comparison's `profiler` of an experiment without runs, a
table's empty cell), which must read back as "-", not "'-".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:      # pandas loads where a frame is made: mmsched.verdict.export, in every `mmrig`, needs none
    import pandas as pd

from .safefiles import atomic_write

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
PLACEHOLDERS = ("-", "+")    # a sign alone: text in every spreadsheet, never a formula
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def neutralise(value: Any) -> Any:
    """VALUE with a leading "'" when it is text a spreadsheet would take for a formula; anything else unchanged."""
    if isinstance(value, str) and value.startswith(TRIGGERS) and value not in PLACEHOLDERS \
            and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of DF whose text cells (and column names) are neutralised; numeric columns are untouched."""
    from pandas.api import types as pdtypes    # here: DF's caller has pandas loaded already

    out = df.copy()
    for name in out.columns:
        col = out[name]
        if not (pdtypes.is_numeric_dtype(col.dtype) or pdtypes.is_bool_dtype(col.dtype)):
            out[name] = col.astype(object).map(neutralise)
    out.columns = [neutralise(c) for c in out.columns]
    return out


def write_frame(df: pd.DataFrame, path: Path | str, **kwargs: Any) -> None:
    """DF.to_csv(PATH, **KWARGS) with its text cells neutralised, written as every file of ours is
    (safefiles.atomic_write: never through a link planted under PATH's name)."""
    atomic_write(path, safe_frame(df).to_csv(**kwargs).encode("utf-8"))

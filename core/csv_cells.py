"""CSV cells a spreadsheet will not run as formulas (a cell starting with =, +, -, @, tab,
CR or NUL is neutralised), for every app's CSV output (pure)."""

from __future__ import annotations

# A cell starting with one of these is read as a formula (or hides one) by spreadsheet programs.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")


def csv_safe(text: str) -> str:
    """Neutralise a CSV string cell a spreadsheet would run as a formula: prefix a single quote."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text

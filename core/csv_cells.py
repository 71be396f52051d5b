"""CSV cells a spreadsheet will not run as formulas (a cell starting with =, +, -, @, tab,
CR or NUL is neutralised) and whose direction controls cannot reorder the cells beside them, for every
app's CSV output (pure)."""

from __future__ import annotations

import re

# A cell starting with one of these is read as a formula (or hides one) by spreadsheet programs.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")
# Explicit direction controls: embeddings and overrides (LRE, RLE, PDF, LRO, RLO), isolates (LRI, RLI,
# FSI, PDI), the marks (LRM, RLM, ALM). An unclosed override in a team's name would show the rest of the
# line (the cells after it) reversed in a text viewer.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
ISOLATES = re.compile("[\u2066-\u2069]")
FSI, PDI = "\u2068", "\u2069"


def csv_safe(text: str) -> str:
    """Neutralise a CSV string cell a spreadsheet would run as a formula (prefix a single quote), and
    isolate a cell that holds direction controls (first-strong isolate … pop directional isolate: the
    closing PDI ends every embedding and override opened inside, so nothing reorders past the cell). The
    cell's own isolate controls are dropped first: a stray PDI in it would close the wrapping FSI early."""
    if text.startswith(FORMULA_STARTS):
        text = "'" + text
    if BIDI_CONTROLS.search(text):
        text = FSI + ISOLATES.sub("", text) + PDI
    return text

"""Typing checks of the blind writing screen: a pure function over plain numbers (no Django).

The point of the protocol (seed 000, sec. 2.3) is captions written in the language, free of
translation artefacts. A caption pasted in whole, or typed faster than a person types, was most
likely written elsewhere (a machine translation, a copy). Such captions are FLAGGED, never refused:
the manager reviews them and decides to keep or exclude each one.

Flags, in the order they are reported:

* ``pasted``: pasted text makes up at least ``pasted_share`` of the caption's length;
* ``fast``: from the first key to the last, more than ``max_chars_per_second`` characters a
  second (a fast typist sustains 6 to 8; 15 leaves room for autocompletion);
* ``untyped``: fewer keystrokes than a quarter of the characters, and not explained by pasting
  (dropped text, autofill, a script);
* ``unmeasured``: the page sent no typing record at all (a client that bypassed the page).

``fast`` and ``untyped`` apply to captions of at least ``min_chars`` characters: a three-word
caption typed in a second is not suspicious.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FLAGS", "TypingFigures", "TypingRules", "typing_flags"]

FLAGS = ("pasted", "fast", "untyped", "unmeasured")
UNTYPED_KEYS_PER_CHAR = 0.25


@dataclass(frozen=True)
class TypingRules:
    pasted_share: float = 0.5
    max_chars_per_second: float = 15.0
    min_chars: int = 20


@dataclass(frozen=True)
class TypingFigures:
    """What the page measured for one caption; ``seconds`` from the first key to the last (None when
    no key was recorded)."""

    chars: int
    keystrokes: int = 0
    paste_count: int = 0
    pasted_chars: int = 0
    seconds: float | None = None
    measured: bool = True


def typing_flags(figures: TypingFigures, rules: TypingRules = TypingRules()) -> list[str]:
    """The flags of one caption (see the module docstring); [] for a caption that looks typed."""
    if figures.chars <= 0:
        return []
    if not figures.measured:
        return ["unmeasured"]
    flags = []
    pasted = figures.paste_count > 0 and figures.pasted_chars >= rules.pasted_share * figures.chars
    if pasted:
        flags.append("pasted")
    if figures.chars >= rules.min_chars:
        if (
            figures.seconds is not None
            and figures.chars / max(figures.seconds, 0.001) > rules.max_chars_per_second
        ):
            flags.append("fast")
        if not pasted and figures.keystrokes < UNTYPED_KEYS_PER_CHAR * figures.chars:
            flags.append("untyped")
    return flags

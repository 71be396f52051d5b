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

Those four read what the page reports, and a client can forge that record. The server's own
evidence is the draft saves it received: for each save that changed the text, the server's clock
and the caption's length (:class:`DraftSaves`). The page saves while the annotator types, at least
once a second (``static/js/screen2.js``), so between two saves a person adds a few characters,
never ``min_chars`` at once. :func:`draft_flags` reads that evidence:

* ``drafts_none``: the caption reached the server in the submit only, never in a draft save;
* ``drafts_whole``: at least ``min_chars`` characters appeared in one save (or between the last
  save and the submit): the caption, or a good part of it, arrived whole;
* ``drafts_fast``: between two saves the caption grew by at least ``min_chars`` characters faster
  than ``max_chars_per_second`` (text fed in small pieces faster than a person types).

A caption is flagged when either source flags it (:func:`caption_flags`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DRAFT_FLAGS",
    "FLAGS",
    "DraftSaves",
    "TypingFigures",
    "TypingRules",
    "caption_flags",
    "draft_flags",
    "typing_flags",
]

FLAGS = ("pasted", "fast", "untyped", "unmeasured")
DRAFT_FLAGS = ("drafts_none", "drafts_whole", "drafts_fast")
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


@dataclass(frozen=True)
class DraftSaves:
    """What the server saw of one caption's draft saves: ``(server time in ms, caption length)`` for
    each save that changed the text, oldest first. ``from_start``: False when the oldest saves were
    dropped (a caption saved very many times keeps only its latest), so the first one kept is not
    compared with an empty caption. ``known``: False for a draft saved before the server kept this
    evidence (nothing can be said from it)."""

    saves: tuple[tuple[int, int], ...] = ()
    from_start: bool = True
    known: bool = True


def draft_flags(
    evidence: DraftSaves | None, *, chars: int, submitted_ms: int, rules: TypingRules = TypingRules()
) -> list[str]:
    """The flags of one submitted caption of ``chars`` characters from its draft saves (see the
    module docstring); ``evidence`` None: no draft was ever saved. The submit at ``submitted_ms``
    counts as a last save."""
    if chars <= 0:
        return []
    if evidence is None or (evidence.known and not evidence.saves and evidence.from_start):
        return ["drafts_none"]
    if not evidence.known:
        return []
    points = [*evidence.saves, (submitted_ms, chars)]
    flags = []
    previous = 0 if evidence.from_start else points[0][1]
    for _, length in points if evidence.from_start else points[1:]:
        if length - previous >= rules.min_chars:
            flags.append("drafts_whole")
            break
        previous = length
    if _grew_too_fast(points, rules):
        flags.append("drafts_fast")
    return flags


def _grew_too_fast(points: list[tuple[int, int]], rules: TypingRules) -> bool:
    """Some span between two saves in which the caption grew by at least ``min_chars`` characters
    at more than ``max_chars_per_second``. Looks back from each save only as far as its length could
    still make the rate (a bounded window: captions are short)."""
    rate = rules.max_chars_per_second / 1000  # characters a millisecond
    for j, (t_j, length_j) in enumerate(points):
        for i in range(j - 1, -1, -1):
            t_i, length_i = points[i]
            elapsed = max(t_j - t_i, 1)
            if length_j <= rate * elapsed:
                break  # no earlier save can make this span fast: the growth is at most length_j
            grown = length_j - length_i
            if grown >= rules.min_chars and grown > rate * elapsed:
                return True
    return False


def caption_flags(
    figures: TypingFigures,
    evidence: DraftSaves | None,
    *,
    submitted_ms: int,
    rules: TypingRules = TypingRules(),
) -> list[str]:
    """Every flag of one submitted caption: the page's record first, then the server's draft saves."""
    return typing_flags(figures, rules) + draft_flags(
        evidence, chars=figures.chars, submitted_ms=submitted_ms, rules=rules
    )

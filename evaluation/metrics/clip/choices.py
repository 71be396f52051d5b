"""The one rule of the CLIP settings that take a word from a fixed list (orientation, pipeline, autocast,
compile mode, text packing): the value as given, or ValueError naming the setting and its choices."""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["choice_check"]


def choice_check(value: object, choices: Collection[str], setting: str, choose: str) -> str:
    """``value`` as a ``str`` if it is one of ``choices``; otherwise ``ValueError``
    ``"unknown <setting> <value!r>; choose <choose>"`` (``choose``: the choices as a reader reads them)."""
    if value not in choices:
        raise ValueError(f"unknown {setting} {value!r}; choose {choose}")
    return str(value)

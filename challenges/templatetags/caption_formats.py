"""The result-file formats a phase accepts, for its upload form: labels and examples from the registry."""

from __future__ import annotations

from dataclasses import dataclass

from django import template
from django.utils.translation import gettext

from core import caption_files

register = template.Library()


@dataclass(frozen=True)
class ShownFormat:
    name: str
    label: str
    examples: tuple[str, ...]


@register.filter
def accepted_formats(names) -> list[ShownFormat]:
    """The upload formats among ``names`` (a phase's ``accepted_formats``; empty: all of them), in the
    registry's order, each with its label in the page's language."""
    chosen = set(names or ()) & set(caption_files.UPLOAD_FORMATS) or set(caption_files.UPLOAD_FORMATS)
    return [
        ShownFormat(name, gettext(spec.label), spec.examples)
        for name, spec in caption_files.FORMATS.items()
        if name in chosen
    ]

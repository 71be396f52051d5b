"""The interface's compiled message catalogues: .po files compiled to .mo with Babel (pure Python),
so that neither the server nor the tests need GNU gettext. The .mo files are committed; the test
suite checks that each one says exactly what its .po file says."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po
from django.conf import settings

DOMAINS = ("django", "djangojs")


@dataclass(frozen=True)
class Catalogue:
    language: str
    domain: str
    po: Path

    @property
    def mo(self) -> Path:
        return self.po.with_suffix(".mo")


def catalogues() -> list[Catalogue]:
    """Every .po file of the project's locale folders (``settings.LOCALE_PATHS``)."""
    found = []
    for root in settings.LOCALE_PATHS:
        for po in sorted(Path(root).glob("*/LC_MESSAGES/*.po")):
            if po.stem in DOMAINS:
                found.append(Catalogue(language=po.parent.parent.name, domain=po.stem, po=po))
    return found


def read_catalogue(path: Path):
    with path.open("rb") as handle:
        return read_po(handle, locale=path.parent.parent.name, domain=path.stem)


def compiled(catalogue: Catalogue) -> bytes:
    """The .mo bytes of ``catalogue``'s .po file; fuzzy and untranslated entries are left out."""
    buffer = io.BytesIO()
    write_mo(buffer, read_catalogue(catalogue.po), use_fuzzy=False)
    return buffer.getvalue()


def translations_of(mo_bytes: bytes) -> dict:
    """{msgid (or (msgid, plural)) with its context: translation} of compiled catalogue bytes."""
    catalog = read_mo(io.BytesIO(mo_bytes))
    return {(m.context, m.id if isinstance(m.id, str) else tuple(m.id)): m.string for m in catalog if m.id}


def stale(catalogue: Catalogue) -> bool:
    """True when the committed .mo is missing or says something else than the .po."""
    if not catalogue.mo.exists():
        return True
    return translations_of(catalogue.mo.read_bytes()) != translations_of(compiled(catalogue))

"""Path converters that refuse, in the resolver, what no row could match.

Django's ``int`` takes any run of digits and ``str`` anything without a slash, so ``10**30`` and a NUL
reached the views: PostgreSQL refuses a NUL in a string literal (a 500 ``ValueError``) and an id past
bigint cannot name a row. With these, such a path is a plain 404 before any view runs.
"""

from __future__ import annotations

from django.urls import register_converter

from core.bounds import BIGINT_MAX


class IdConverter:
    """A primary key (BigAutoField): 1 … 2^63 − 1, written without a sign or leading zeros."""

    regex = "[1-9][0-9]{0,18}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > BIGINT_MAX:
            raise ValueError("id out of range")  # the resolver's signal for "no match"
        return number

    def to_url(self, value: int) -> str:
        return str(int(value))


class CodeConverter:
    """A language code, BCP 47-ish: letters, digits and hyphens, 1–16 characters (Language.code)."""

    regex = "[A-Za-z0-9-]{1,16}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class ShortSlugConverter(CodeConverter):
    """A slug of at most 100 characters (a benchmark's ``SlugField``)."""

    regex = "[-a-zA-Z0-9_]{1,100}"


class TokenConverter(CodeConverter):
    """A URL-safe secret of at most 64 characters (an invitation link's token)."""

    regex = "[-a-zA-Z0-9_]{1,64}"


class ImageKeyConverter(CodeConverter):
    """An image key in a path (Image.key, at most 200 characters): letters, digits, ``_``, ``-`` and
    ``.``, not starting with a dot, so no ``..`` path step and no NUL reach a view."""

    regex = "[A-Za-z0-9_][-A-Za-z0-9_.]{0,199}"


def converters_register() -> None:
    """Register ``<id:…>``, ``<code:…>``, ``<slug100:…>`` and ``<token:…>`` for every urls.py; called from
    CoreConfig.ready()."""
    register_converter(IdConverter, "id")
    register_converter(CodeConverter, "code")
    register_converter(ShortSlugConverter, "slug100")
    register_converter(TokenConverter, "token")
    register_converter(ImageKeyConverter, "imagekey")

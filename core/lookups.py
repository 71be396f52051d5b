"""Rows named by a person (codes, names typed in a form or on a command line), found all at once; and one
row by its id, or NotFound."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from core.errors import NotFound, ValidationFailed


def each_named(
    queryset, field: str, names: Iterable[str], *, empty: str, unknown: Callable[[list[str]], str]
) -> list:
    """The rows of ``queryset`` whose ``field`` is each of ``names``, in the order given, each once
    (names are stripped; blank ones are left out). ValidationFailed with ``empty`` when no name is
    left, and with ``unknown(the names not found)`` when some name matches no row."""
    wanted = list(dict.fromkeys(name.strip() for name in names if name and name.strip()))
    if not wanted:
        raise ValidationFailed(empty)
    found = {getattr(row, field): row for row in queryset.filter(**{f"{field}__in": wanted})}
    missing = [name for name in wanted if name not in found]
    if missing:
        raise ValidationFailed(unknown(missing))
    return [found[name] for name in wanted]


def row_by_id(queryset, pk: int, what: str):
    """The row ``pk`` of ``queryset``; NotFound "There is no {what} #{pk}." when it holds none."""
    try:
        return queryset.get(pk=pk)
    except queryset.model.DoesNotExist:
        raise NotFound(f"There is no {what} #{pk}.") from None

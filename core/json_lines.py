"""Reading JSON-lines text (one JSON value per line, blank lines skipped), for every app's readers (pure)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator


def json_lines(
    lines: Iterable[str], invalid: Callable[[int, json.JSONDecodeError], Exception]
) -> Iterator[tuple[int, object]]:
    """(line number from 1, parsed value) of each non-blank line; a line that is not JSON raises the
    reader's own error, ``invalid(line number, decode error)``."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise invalid(number, error) from error
        yield number, value

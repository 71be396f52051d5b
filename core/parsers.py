"""The JSON parser of every API endpoint: refuses over-large and over-deep bodies before parsing them.

Python's ``json`` recurses once per nesting level, so a body nested a few thousand levels deep ends in
``RecursionError`` (a 500) however small it is. The body is therefore read with a size bound and
scanned for its nesting depth (brackets outside strings) first; only then is it parsed. Both limits are
settings, far above anything the pages or a researcher's client send.
"""

from __future__ import annotations

import json

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[`` / ``{`` in a JSON text, ignoring brackets inside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number this API accepts")


class BoundedJSONParser(JSONParser):
    """JSON with at most ``API_MAX_BODY_BYTES`` bytes (else 413) and ``API_MAX_JSON_DEPTH`` levels of
    nesting (else 400), and no NaN or Infinity; everything else as DRF's JSONParser."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        data = stream.read(limit + 1) if stream is not None else b""
        if len(data) > limit:
            raise BodyTooLarge(f"The request body is larger than {limit:,} bytes; nothing was changed.")
        max_depth = settings.API_MAX_JSON_DEPTH
        # A body cannot nest deeper than it has opening brackets: counting them is a fast bound that
        # spares every body the pages send the byte-by-byte scan.
        if data.count(b"[") + data.count(b"{") > max_depth and json_depth(data) > max_depth:
            raise ParseError(f"The JSON body is nested deeper than {max_depth} levels; nothing was changed.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return json.loads(data.decode(encoding), parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"The body is not valid JSON: {exc}.") from None

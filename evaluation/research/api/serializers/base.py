"""The strict bases of the research API's inputs: unknown fields and query parameters are refused."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import get_args, get_type_hints

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.bounds import BIGINT_MAX
from evaluation.research.correlation import CORRELATION_N_BOOT
from evaluation.research.meta_evaluation import DEFAULT_N_PERMUTATIONS, Status

TRUST_STATUSES = get_args(Status)

# Query parameters every list endpoint accepts besides its filters.
COMMON_QUERY_PARAMETERS = frozenset({"page", "format"})


# The output field of each plain type a result's dataclass field may have.
_FIELDS_BY_TYPE = {
    int: serializers.IntegerField,
    float: serializers.FloatField,
    str: serializers.CharField,
    bool: serializers.BooleanField,
}


def result_serializer(
    result: type, name: str, *, exclude: tuple[str, ...] = (), help_texts=None, doc: str | None = None
) -> type:
    """The output serializer of the dataclass ``result``: one field per dataclass field, in its order,
    but ``exclude``; ``T | None`` is nullable; ``doc`` is the schema's description of it. The API
    publishes what the result holds: a field added to the result appears in it."""
    help_texts = help_texts or {}
    hints = get_type_hints(result)
    fields = {}
    for item in dataclasses.fields(result):
        if item.name in exclude:
            continue
        kind = hints[item.name]
        options = {"help_text": help_texts[item.name]} if item.name in help_texts else {}
        if isinstance(kind, types.UnionType) and type(None) in get_args(kind):
            (kind,) = (arg for arg in get_args(kind) if arg is not type(None))
            options["allow_null"] = True
        fields[item.name] = _FIELDS_BY_TYPE[kind](**options)
    return type(name, (serializers.Serializer,), {**fields, "__doc__": doc, "__module__": __name__})


class StrictInputSerializer(serializers.Serializer):
    """A request body: a key that is not a field of the serializer is refused (400, naming it)
    instead of silently dropped, so a client never believes it set ``status`` or ``created_by``."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["This field cannot be set (it is not part of this request)."] for name in unknown}
                )
        return super().to_internal_value(data)


class StrictFilterSerializer(serializers.Serializer):
    """Query parameters of a list endpoint: an unknown parameter (a misspelt filter) is refused
    rather than ignored, which would answer with everything."""

    def validate(self, attrs):
        unknown = sorted(set(self.initial_data) - set(self.fields) - COMMON_QUERY_PARAMETERS)
        if unknown:
            known = ", ".join(sorted(set(self.fields) | {"page"}))
            raise serializers.ValidationError(
                f"Unknown query parameter(s): {', '.join(unknown)}. This endpoint takes: {known}."
            )
        return attrs


@extend_schema_field(OpenApiTypes.STR)
class CommaSeparatedIdsField(serializers.Field):
    """``1,2,3`` -> [1, 2, 3] (positive integers, order kept, duplicates dropped)."""

    default_error_messages = {
        "invalid": "Give ids as positive integers separated by commas, e.g. 3,7.",
        "empty": "Give at least one id.",
        "too_many": "At most {max} ids.",
    }

    def __init__(self, *, max_ids: int = 100, **kwargs):
        self.max_ids = max_ids
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        parts = [part.strip() for part in data.split(",") if part.strip()]
        if not parts:
            self.fail("empty")
        if not all(part.isascii() and part.isdigit() and 0 < int(part) <= BIGINT_MAX for part in parts):
            self.fail("invalid")
        ids = list(dict.fromkeys(int(part) for part in parts))
        if len(ids) > self.max_ids:
            self.fail("too_many", max=self.max_ids)
        return ids

    def to_representation(self, value):
        return ",".join(str(v) for v in value)


# The most bootstrap resamples or permutation draws one request may ask for: it bounds the request's time.
MAX_DRAWS = 10_000


def draws_field(least: int, default: int, help_text: str) -> serializers.IntegerField:
    """How many random draws (resamples, permutations) a request asks for: ``least`` to MAX_DRAWS."""
    return serializers.IntegerField(
        required=False, min_value=least, max_value=MAX_DRAWS, default=default, help_text=help_text
    )


class ComparisonFilterSerializer(StrictFilterSerializer):
    """The selection and the draws of the endpoints built on the comparisons (``comparisons_from_db``):
    correlations and the trust table, so the same parameters give the same comparisons in both."""

    runs = CommaSeparatedIdsField(help_text="Metric run ids, comma-separated (succeeded runs).")
    campaigns = CommaSeparatedIdsField(
        required=False,
        help_text="Side-by-side campaign ids, any state; default: every finished one (closed, or every item "
        "judged K times), the unfinished ones listed in `skipped`.",
    )
    n_boot = draws_field(0, CORRELATION_N_BOOT, "Bootstrap resamples of the 95% intervals; 0: no intervals.")
    n_permutations = draws_field(
        1,
        DEFAULT_N_PERMUTATIONS,
        "Draws of each permutation test (soft pairwise accuracy; significance between metrics).",
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=BIGINT_MAX, default=0)

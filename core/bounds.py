"""Input fields bounded by what their database columns hold, for every serializer that takes input.

An unbounded ``IntegerField`` lets ``2**31`` through validation and the database then refuses it with a
``DataError`` (a 500 after the transaction started); a bounded one answers 400 with the field's name
before anything is touched.
"""

from __future__ import annotations

from rest_framework import serializers

# PostgreSQL's integer and bigint (Django's PositiveIntegerField / IntegerField and BigAutoField).
INT_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1
# Seconds an annotator spent on an image or a screen: a week is far more than any lease.
SECONDS_MAX = 7 * 24 * 3600


def id_field(**kwargs) -> serializers.IntegerField:
    """A primary key (BigAutoField): 1 … 2^63 − 1."""
    return serializers.IntegerField(min_value=1, max_value=BIGINT_MAX, **kwargs)


def counter_field(**kwargs) -> serializers.IntegerField:
    """A PositiveIntegerField column (a revision counter): 0 … 2^31 − 1."""
    return serializers.IntegerField(min_value=0, max_value=INT_MAX, **kwargs)


def seconds_field(**kwargs) -> serializers.FloatField:
    """Seconds measured by a page: 0 … a week, or null; NaN and infinity are refused by DRF."""
    kwargs.setdefault("required", False)
    kwargs.setdefault("allow_null", True)
    return serializers.FloatField(min_value=0, max_value=SECONDS_MAX, **kwargs)

"""What every campaign a manager creates must satisfy, and the limits behind it."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from annotation.models import Campaign, CaptioningSystem, Language
from core.errors import ValidationFailed

PROMPT_LANGUAGE = "en"
SEED_MAX = 2**63 - 1
MAX_BATCH_SIZE = 100
MAX_REPLICATION = 20

_SYSTEM_RANDOM = random.SystemRandom()


@dataclass(frozen=True)
class CampaignSettings:
    """What every created campaign shares, as :func:`campaign_settings_check` accepted it: stored as it is on
    the campaign (the name stripped)."""

    name: str
    batch_size: int
    replication: int
    sample_size: int | None
    sample_seed: int | None

    def campaign_create(self, **fields) -> Campaign:
        """Store a campaign with these settings and its own ``fields`` (kind, language, lease, systems...),
        which win over them."""
        return Campaign.objects.create(**{**asdict(self), **fields})


def campaign_settings_check(
    *, name: str, batch_size: int, replication: int, sample_size: int | None, seed: int | None
) -> CampaignSettings:
    """Validate what every created campaign shares (a new name, batch size, replication, sample, seed); return
    it, with the seed to use (drawn if not given)."""
    if not name or not name.strip():
        raise ValidationFailed("Give the campaign a name.")
    if Campaign.objects.filter(name=name.strip()).exists():
        raise ValidationFailed(f"A campaign named “{name.strip()}” already exists.")
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise ValidationFailed(f"The batch size must be between 1 and {MAX_BATCH_SIZE}.")
    if not 1 <= replication <= MAX_REPLICATION:
        raise ValidationFailed(f"The replication must be between 1 and {MAX_REPLICATION}.")
    if sample_size is not None and sample_size < 1:
        raise ValidationFailed("The sample size must be at least 1 (or empty for every image).")
    if seed is None:
        seed = _SYSTEM_RANDOM.randrange(2**31)
    elif isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ValidationFailed(f"The seed must be a whole number from 0 to {SEED_MAX}.")
    return CampaignSettings(name.strip(), batch_size, replication, sample_size, seed)


def language_of(code: str) -> Language:
    """The language with this code; ValidationFailed if there is none."""
    try:
        return Language.objects.get(code=code)
    except Language.DoesNotExist:
        raise ValidationFailed(f"There is no language “{code}”.") from None


def shuffle_key() -> int:
    """A new item's shuffle key (where it stands in the order batches take items): drawn for each item from
    the system's randomness, never from the campaign's seed, which reproduces the images and not their order."""
    return _SYSTEM_RANDOM.randrange(2**31)


def system_of(value: CaptioningSystem | str | int, role: str) -> CaptioningSystem:
    """The captioning system given as itself, its id or its name; ValidationFailed naming ``role`` if none."""
    if isinstance(value, CaptioningSystem):
        return value
    lookup = {"pk": value} if isinstance(value, int) else {"name": value}
    try:
        return CaptioningSystem.objects.get(**lookup)
    except CaptioningSystem.DoesNotExist:
        raise ValidationFailed(f"There is no captioning system “{value}” ({role}).") from None


def same_text(a: str, b: str) -> bool:
    """Two captions read the same when they differ only in spacing and case: such a side-by-side pair is
    an identical pair, and such a caption cannot stand as another image's mismatched control."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()

"""The embedded demo: real photographs, two captioning systems, three languages, accounts.

The photographs are the sample images that ship inside the scikit-image wheel (no
download): 17 real photographs, with the source and licence that scikit-image documents
for each. The English captions were written by looking at each picture: "demo-good" is
accurate and specific, "demo-weak" is vague or partly wrong, as a weaker model would be.
Both systems also have German captions (faithful translations of their English ones), for
an open side-by-side campaign in German: demo-weak (m1) against demo-good (m2), K = 3,
which the three German annotators can fill.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import (
    Annotator,
    AnnotatorSkill,
    Campaign,
    CampaignKind,
    CampaignState,
    CaptioningSystem,
    SkillLevel,
    SystemCaption,
)
from annotation.services.campaigns import PROMPT_LANGUAGE, campaign_open, sxs_campaign_create
from annotation.services.images import image_store
from annotation.services.languages import language_ensure
from core.access import PROJECT_MANAGERS, RESEARCHERS, role_grant, roles_ensure
from core.errors import ValidationFailed

# Published on purpose: demo accounts only (load_demo refuses to run with DEBUG off).
DEMO_PASSWORD = "demo-pass-2026"  # noqa: S105
GOOD_SYSTEM = "demo-good"
WEAK_SYSTEM = "demo-weak"
BATCH_SIZE = 15
REPLICATION = 2
SXS_LANGUAGE = "de"
# Annotators see campaign names: no system name in it.
SXS_CAMPAIGN = "Demo: side by side in German"
SXS_BATCH_SIZE = 10
SXS_REPLICATION = 3
SXS_SEED = 2026


@dataclass(frozen=True)
class DemoPhoto:
    key: str
    filename: str  # inside skimage/data/ of the installed wheel
    good: str
    weak: str
    title: str
    author: str
    license: str
    source_url: str = ""
    place: dict = field(default_factory=dict)
    # The same two captions in German (translated faithfully, the weak one staying weak), so
    # the two systems can be compared side by side in German.
    good_de: str = ""
    weak_de: str = ""


# The photographs with their captions, title, author, licence and source (plain data).
PHOTOS: tuple[DemoPhoto, ...] = tuple(
    DemoPhoto(**photo)
    for photo in json.loads(
        resources.files(__package__).joinpath("demo_photos.json").read_text(encoding="utf-8")
    )
)

# Target languages: one right-to-left, one written without spaces (per-character tokens).
LANGUAGES = ("de", "ar", "ja")


@dataclass(frozen=True)
class DemoAccount:
    username: str
    role: str  # "annotator", "project manager", "researcher"
    languages: tuple[tuple[str, str], ...] = ()  # (code, level)


ACCOUNTS: tuple[DemoAccount, ...] = (
    DemoAccount("anna-de", "annotator", (("de", SkillLevel.NATIVE),)),
    DemoAccount("ben-de", "annotator", (("de", SkillLevel.FLUENT),)),
    # A third German speaker, so the side-by-side campaign can reach K = 3.
    DemoAccount("clara-de", "annotator", (("de", SkillLevel.NATIVE),)),
    # A fourth, so a verification campaign with K = 3 can be filled: nobody rates their own
    # caption, so a caption written by anna-de needs three raters among the other three.
    DemoAccount("dora-de", "annotator", (("de", SkillLevel.NATIVE),)),
    DemoAccount("omar-ar", "annotator", (("ar", SkillLevel.NATIVE),)),
    DemoAccount("layla-ar", "annotator", (("ar", SkillLevel.NATIVE),)),
    DemoAccount("yuki-ja", "annotator", (("ja", SkillLevel.NATIVE),)),
    DemoAccount("kenji-ja", "annotator", (("ja", SkillLevel.FLUENT),)),
    DemoAccount("manager", "project manager"),
    DemoAccount("researcher", "researcher"),
)


@dataclass
class DemoSummary:
    images: int = 0
    images_created: int = 0
    captions: int = 0
    captions_created: int = 0
    users_created: int = 0
    campaigns: list[tuple[str, str, str]] = field(default_factory=list)  # (name, language, state)
    notes: list[str] = field(default_factory=list)
    accounts: list[DemoAccount] = field(default_factory=list)
    password: str = DEMO_PASSWORD

    @property
    def changed(self) -> bool:
        return bool(self.images_created or self.captions_created or self.users_created)


def demo_photo_bytes(photo: DemoPhoto) -> bytes:
    """The photo's file as shipped inside the scikit-image wheel (no download)."""
    try:
        return resources.files("skimage").joinpath("data", photo.filename).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise ValidationFailed(
            f"The demo photo {photo.filename} is not available: install scikit-image (requirements.txt). ({exc})"
        ) from None


def _account_ensure(account: DemoAccount, summary: DemoSummary) -> None:
    User = get_user_model()
    user, created = User.objects.get_or_create(username=account.username)
    if created:
        # Only on creation: a password changed since is left alone.
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
        summary.users_created += 1
    if account.role == "project manager":
        role_grant(user=user, role=PROJECT_MANAGERS)
    elif account.role == "researcher":
        role_grant(user=user, role=RESEARCHERS)
    else:
        annotator, _ = Annotator.objects.get_or_create(user=user, defaults={"reads_english": True})
        for code, level in account.languages:
            AnnotatorSkill.objects.get_or_create(
                annotator=annotator, language=language_ensure(code=code), defaults={"level": level}
            )
    summary.accounts.append(account)


def demo_load() -> DemoSummary:
    """Load the demo: images, both systems' English (and German) captions, languages, accounts,
    one open caption campaign per language and an open side-by-side campaign in German.

    Idempotent: a second run finds everything in place and changes nothing (a campaign a
    project manager has closed stays closed; a changed password stays changed). Runs in
    one transaction. Raises ValidationFailed if scikit-image's sample photos are missing.
    """
    summary = DemoSummary()
    with transaction.atomic():
        roles_ensure()
        english = language_ensure(code=PROMPT_LANGUAGE)
        targets = [language_ensure(code=code) for code in LANGUAGES]
        sxs_language = targets[LANGUAGES.index(SXS_LANGUAGE)]
        good, _ = CaptioningSystem.objects.get_or_create(
            name=GOOD_SYSTEM, defaults={"description": "Demo system: accurate, specific captions."}
        )
        weak, _ = CaptioningSystem.objects.get_or_create(
            name=WEAK_SYSTEM, defaults={"description": "Demo system: vague or partly wrong captions."}
        )
        for photo in PHOTOS:
            image, created = image_store(
                key=photo.key,
                data=demo_photo_bytes(photo),
                name=photo.filename,
                title=photo.title,
                author=photo.author,
                license=photo.license,
                source_url=photo.source_url,
                **photo.place,
            )
            summary.images += 1
            summary.images_created += int(created)
            for system, language, text in (
                (good, english, photo.good),
                (weak, english, photo.weak),
                (good, sxs_language, photo.good_de),
                (weak, sxs_language, photo.weak_de),
            ):
                _, created = SystemCaption.objects.get_or_create(
                    system=system, image=image, language=language, defaults={"text": text}
                )
                summary.captions += 1
                summary.captions_created += int(created)

        for account in ACCOUNTS:
            _account_ensure(account, summary)

        batch_size = min(BATCH_SIZE, len(PHOTOS))
        for language in targets:
            campaign, created = Campaign.objects.get_or_create(
                name=f"Demo: captions in {language.name}",
                defaults={
                    "kind": CampaignKind.CAPTION,
                    "language": language,
                    "prompt_system": good,
                    "batch_size": batch_size,
                    "replication": REPLICATION,
                },
            )
            if created or campaign.state == CampaignState.DRAFT:
                campaign = campaign_open(campaign_id=campaign.pk)
            summary.campaigns.append((campaign.name, language.code, campaign.state))

        campaign = Campaign.objects.filter(name=SXS_CAMPAIGN).first()
        if campaign is None:
            campaign = sxs_campaign_create(
                name=SXS_CAMPAIGN,
                language_code=SXS_LANGUAGE,
                base_system=weak,
                test_system=good,
                seed=SXS_SEED,
                batch_size=SXS_BATCH_SIZE,
                replication=SXS_REPLICATION,
                controls_identical=1,
                controls_wrong_image=1,
            )
        if campaign.state == CampaignState.DRAFT:
            campaign = campaign_open(campaign_id=campaign.pk)
        summary.campaigns.append((campaign.name, SXS_LANGUAGE, campaign.state))
        speakers = ", ".join(
            a.username for a in ACCOUNTS if any(code == SXS_LANGUAGE for code, _ in a.languages)
        )
        summary.notes.append(
            f"“{SXS_CAMPAIGN}” compares {WEAK_SYSTEM} (m1) with {GOOD_SYSTEM} (m2), each pair judged by "
            f"{SXS_REPLICATION} annotators: log in as {speakers} in turn to fill it. A verification campaign is "
            "created by the manager in the admin (Campaigns › Add verification campaign) once a caption "
            "campaign has captions; nobody rates their own caption, so with K = 3 it takes all four."
        )
    return summary

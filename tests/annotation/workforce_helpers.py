"""Shared set-up of the recruitment and onboarding tests (annotation.workforce)."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from annotation.models import Annotator, CampaignOnboarding, TutorialAttempt, TutorialItem
from annotation.workforce.scoring import gold_order
from annotation.workforce.services import entry_link_create
from tests import factories as f

PID = "5f1c0ffee0123456789abcde"
STUDY = "65aa00000000000000000001"
SESSION = "sess0000000000000000000a"


def prolific(pid: str = PID, session: str = SESSION, study: str = STUDY) -> dict:
    return {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}


def link_for(campaign, **kwargs):
    kwargs.setdefault("completion_code", "C0DE42")
    kwargs.setdefault("completion_url", "https://app.prolific.example/submissions/complete?cc=C0DE42")
    return entry_link_create(campaign_id=campaign.pk, **kwargs)


def join_url(link) -> str:
    return reverse("annotation:join", args=[link.token])


def crowd_join(link, params: dict | None = None, client: Client | None = None, language: str = "en"):
    """Follow the link as a crowd participant (GET, then the Start button); returns (client, response).

    The participant's pages would speak the campaign's language (German, in most of these tests);
    ``language`` is the interface language they pick (the tests read English; "" keeps the default)."""
    client = client or Client(HTTP_ACCEPT_LANGUAGE=language or "en")
    params = params if params is not None else prolific()
    client.get(join_url(link), params)
    response = client.post(join_url(link), params)
    user_id = client.session.get("_auth_user_id")
    if language and user_id:
        Annotator.objects.filter(user_id=user_id).update(interface_language=language)
    return client, response


def declare(client, campaign, *languages, reads_english=True):
    data = {"native": [language.pk for language in languages]}
    if reads_english:
        data["reads_english"] = "on"
    return client.post(reverse("annotation:participant_languages", args=[campaign.pk]), data)


def tutorial_for(campaign, expected=("good", "bad"), threshold=0.5, explanations=None):
    """Gold items with the given expected answers and a threshold; returns the items."""
    CampaignOnboarding.objects.update_or_create(
        campaign=campaign, defaults={"tutorial_enabled": True, "pass_threshold": threshold}
    )
    items = []
    for i, want in enumerate(expected, start=1):
        items.append(
            TutorialItem.objects.create(
                campaign=campaign,
                position=i,
                image=f.ImageFactory(),
                caption=f"A dog on a beach ({i})",
                caption_right=f"Two children in a park ({i})" if want in ("left", "right", "similar") else "",
                expected=want,
                explanation=(explanations or {}).get(i, f"Gold item {i}: expected {want}."),
            )
        )
    return items


def in_manager_order(campaign, *annotators):
    """Give each annotator the seed that orders ``campaign``'s gold items as the manager did (by
    position), so that a test can name the item it expects next. Everyone else gets a random order."""
    ids = list(
        TutorialItem.objects.filter(campaign=campaign).order_by("position", "pk").values_list("pk", flat=True)
    )
    seed = next(s for s in range(100_000) if gold_order(ids, s) == ids)
    for annotator in annotators:
        TutorialAttempt.objects.update_or_create(
            campaign=campaign, annotator=annotator, defaults={"seed": seed}
        )

"""``{% workforce_card campaign %}``: on a dashboard card, what a participant must do before real work
(declare languages, take the tutorial) and the link to their pilot feedback."""

from __future__ import annotations

from django import template

from annotation.models import CaptionReview, Enrolment
from annotation.workforce.selectors import (
    completion_for,
    counted_batches,
    onboarding_of,
    tutorial_required,
    tutorial_result,
)

register = template.Library()


@register.inclusion_tag("annotation/workforce/card.html", takes_context=True)
def workforce_card(context, campaign):
    annotator = getattr(context.get("request"), "annotator", None)
    state = {}
    if annotator is not None:
        enrolment = Enrolment.objects.filter(campaign=campaign, annotator=annotator).first()
        if enrolment is not None and enrolment.account_created and enrolment.skills_declared_at is None:
            state["languages"] = True
        elif enrolment is not None:
            # The quota is done: the completion code stays at hand on the dashboard.
            last = (
                counted_batches(annotator, campaign)
                .select_related("campaign", "annotator")
                .order_by("-submitted_at")
                .first()
            )
            done = completion_for(last) if last is not None else None
            state["completion"] = done if done is not None and done.final else None
        if not state.get("languages") and tutorial_required(campaign):
            result = tutorial_result(annotator, campaign)
            state["tutorial"] = result is None
        onboarding = onboarding_of(campaign)
        state["pilot_feedback"] = bool(
            onboarding
            and onboarding.is_pilot
            and CaptionReview.objects.filter(
                caption__campaign=campaign, caption__annotator=annotator
            ).exists()
        )
    return {"campaign": campaign, "state": state}

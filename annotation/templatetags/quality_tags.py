"""The admin index's notice of workforce-quality work waiting for a manager."""

from __future__ import annotations

from django import template
from django.urls import reverse

from annotation.quality.models import ImageWithdrawal, TypingRecord, TypingReview
from annotation.quality.reports import reports_to_review

register = template.Library()


@register.inclusion_tag("admin/annotation/quality_notice.html", takes_context=True)
def quality_notice(context):
    """Withdrawn images, image reports and flagged captions waiting for review, for users who can view them."""
    user = context["request"].user
    items = []
    if user.has_perm("annotation.view_imagewithdrawal"):
        n = ImageWithdrawal.objects.count()
        if n:
            items.append(
                (
                    f"{n} image{'s' if n != 1 else ''} withdrawn after reports",
                    reverse("admin:annotation_imagewithdrawal_changelist"),
                )
            )
    if user.has_perm("annotation.view_imagereport"):
        n = reports_to_review().count()
        if n:
            items.append(
                (
                    f"{n} image report{'s' if n != 1 else ''} to review (from reporters not trusted yet)",
                    reverse("admin:annotation_imagereport_changelist") + "?state=review",
                )
            )
    if user.has_perm("annotation.view_typingrecord"):
        n = TypingRecord.objects.filter(review=TypingReview.PENDING).count()
        if n:
            items.append(
                (
                    f"{n} flagged caption{'s' if n != 1 else ''} to review (pasted, typed implausibly fast, or sent whole)",
                    reverse("admin:annotation_typingrecord_changelist") + "?review__exact=pending",
                )
            )
    return {"items": items}

"""Downloads of the research exports, for staff (project managers and researchers).

Thin: check the role, call ``export_prepare``, stream. Every download is a
``StreamingHttpResponse`` (constant memory) with a ``Content-Disposition`` file name and a short
provenance summary in the ``X-Export-Provenance`` header; the full provenance, with row counts and
the sha256 of the file, is at the sibling URL ``<download URL>.provenance.json`` (it streams the
export once more to hash it, so it describes the data as they are at that moment: for a closed
campaign, the same bytes as the download).

Who downloads is ``core.access.can_read_research`` (researchers, project managers, superusers);
annotators and staff without a role get 403, anonymous users are sent to the login page. Unknown campaigns, systems or languages, and exports that do not apply
to a campaign's kind, are 404.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from annotation.models import Campaign
from core.access import research_required
from core.errors import DomainError
from evaluation.research.exports import (
    ExportStream,
    campaign_exports,
    export_digest,
    export_prepare,
    provenance_json,
)
from evaluation.research.exports.rows import system_languages

# What each export holds and how each file format is named: a download's label is "<what>, <format>".
EXPORT_KINDS = {
    "captions": "Captions",
    "ratings": "Ratings",
    "judgments": "Side-by-side judgments",
    "work-time": "Time per image and batch (work-time)",
    "hours": "Hours per annotator (hours)",
    "controls": "Control pass rates per annotator (controls)",
}
EXPORT_FORMATS = {
    "xm3600": "XM3600 captions file (JSON lines)",
    "coco": "COCO annotations (JSON)",
    "csv": "CSV",
    "jsonl": "JSON lines",
}


def export_label(kind: str, fmt: str) -> str:
    return f"{EXPORT_KINDS[kind]}, {EXPORT_FORMATS[fmt]}"


def _with_usernames(request) -> bool:
    """``?with_usernames=1``: an explicit choice, for staff who may see annotator accounts."""
    if request.GET.get("with_usernames") not in ("1", "true", "yes"):
        return False
    if not request.user.has_perm("annotation.view_annotator"):
        raise PermissionDenied
    return True


def _prepare(**kwargs) -> ExportStream:
    try:
        return export_prepare(**kwargs)
    except DomainError as exc:
        # Unknown campaign, or an export that does not exist for its kind: no such URL.
        raise Http404(exc.message) from None


def _download(request, stream: ExportStream) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        (chunk.encode("utf-8") for chunk in stream.chunks()), content_type=stream.content_type
    )
    response["Content-Disposition"] = content_disposition_header(True, stream.filename)
    sidecar = request.path + ".provenance.json"
    if request.META.get("QUERY_STRING"):
        sidecar += "?" + request.META["QUERY_STRING"]
    response["X-Export-Provenance"] = stream.header(sidecar)
    return response


def _provenance(stream: ExportStream) -> HttpResponse:
    response = HttpResponse(
        provenance_json(export_digest(stream)).encode("utf-8"), content_type="application/json; charset=utf-8"
    )
    response["Content-Disposition"] = content_disposition_header(True, stream.filename + ".provenance.json")
    return response


@research_required
@require_GET
def campaign_export(request, campaign_id: int, kind: str, fmt: str, provenance: bool = False):
    stream = _prepare(kind=kind, fmt=fmt, campaign_id=campaign_id, with_usernames=_with_usernames(request))
    return _provenance(stream) if provenance else _download(request, stream)


@research_required
@require_GET
def system_export(request, system_id: int, language: str, provenance: bool = False):
    stream = _prepare(kind="system-captions", fmt="coco-results", system=system_id, language_code=language)
    return _provenance(stream) if provenance else _download(request, stream)


@research_required
@require_GET
def exports_index(request):
    campaigns = []
    for campaign in Campaign.objects.select_related("language").order_by("-created_at", "-pk"):
        links = [
            {
                "label": export_label(kind, fmt),
                "url": reverse(f"exports:{kind}-{fmt}", args=[campaign.pk]),
                "provenance_url": reverse(f"exports:{kind}-{fmt}-provenance", args=[campaign.pk]),
            }
            for kind, fmt in campaign_exports(campaign.kind)
        ]
        campaigns.append({"campaign": campaign, "links": links})
    systems = [
        {
            **row,
            "url": reverse("exports:system-captions", args=[row["system_id"], row["language__code"]]),
            "provenance_url": reverse(
                "exports:system-captions-provenance", args=[row["system_id"], row["language__code"]]
            ),
        }
        for row in system_languages()
    ]
    return render(request, "evaluation/exports.html", {"campaigns": campaigns, "systems": systems})

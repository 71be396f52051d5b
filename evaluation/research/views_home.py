"""The researcher's home page: where the research outputs are, and what is there to read yet."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.models import Campaign, CampaignKind
from core.access import research_required
from evaluation.models import MetricRun, RunStatus


@research_required
@require_GET
def research_home(request):
    """Links to the report, the exports, the API documentation and the (read-only) admin, with the counts
    that say whether a report can be made yet, and how to get what is missing."""
    runs = MetricRun.objects.filter(status=RunStatus.SUCCEEDED)
    context = {
        "n_runs": runs.count(),
        "n_runs_other": MetricRun.objects.exclude(status=RunStatus.SUCCEEDED).count(),
        "n_sxs": Campaign.objects.filter(kind=CampaignKind.SIDE_BY_SIDE).count(),
        "n_campaigns": Campaign.objects.count(),
        "languages": sorted(set(runs.values_list("language__code", flat=True))),
    }
    return render(request, "evaluation/research_home.html", context)

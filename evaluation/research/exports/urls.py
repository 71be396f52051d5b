"""URLs of the research exports (mounted at /exports/): one URL per export and campaign, each with a
sibling ``.provenance.json``."""

from django.urls import path

from evaluation.research.exports import FILE_TYPES, FORMATS, views

app_name = "exports"

urlpatterns = [path("", views.exports_index, name="index")]
for kind, formats in FORMATS.items():
    if kind == "system-captions":
        continue
    for fmt in formats:
        filename = f"{kind}{FILE_TYPES[fmt][0]}"  # e.g. captions.xm3600.jsonl, ratings.csv
        extra = {"kind": kind, "fmt": fmt}
        urlpatterns += [
            path(
                f"campaigns/<id:campaign_id>/{filename}", views.campaign_export, extra, name=f"{kind}-{fmt}"
            ),
            path(
                f"campaigns/<id:campaign_id>/{filename}.provenance.json",
                views.campaign_export,
                {**extra, "provenance": True},
                name=f"{kind}-{fmt}-provenance",
            ),
        ]
urlpatterns += [
    path(
        "systems/<id:system_id>/<code:language>/captions.coco-results.json",
        views.system_export,
        name="system-captions",
    ),
    path(
        "systems/<id:system_id>/<code:language>/captions.coco-results.json.provenance.json",
        views.system_export,
        {"provenance": True},
        name="system-captions-provenance",
    ),
]

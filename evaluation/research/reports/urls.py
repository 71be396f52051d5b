from django.urls import path, re_path

from evaluation.research.reports import views

app_name = "reports"

urlpatterns = [
    path("", views.report_page, name="report"),
    path("selection/", views.report_selection_save, name="selection-save"),
    re_path(
        r"^scatter/(?P<metric>[A-Za-z0-9_-]{1,64})\.(?P<fmt>png|svg)$",
        views.report_scatter,
        name="scatter",
    ),
    re_path(
        r"^finetune/(?P<run_id>[0-9]{1,12})/history\.(?P<fmt>png|svg)$",
        views.finetune_history,
        name="finetune-history",
    ),
    re_path(r"^trust_heatmap\.(?P<fmt>png|svg)$", views.report_trust_heatmap, name="trust-heatmap"),
]

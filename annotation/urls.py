from django.urls import path

from annotation import apis, views
from annotation.quality.apis import ImageReportAPI
from annotation.workforce.urls import urlpatterns as workforce_urlpatterns

app_name = "annotation"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("campaign/<id:campaign_id>/work/", views.campaign_work, name="campaign_work"),
    path("batch/<id:batch_id>/", views.batch_detail, name="batch"),
    path("batch/<id:batch_id>/rate/", views.screen1, name="screen1"),
    path("batch/<id:batch_id>/write/", views.screen2, name="screen2"),
    path("batch/<id:batch_id>/compare/", views.sxs_screen, name="sxs"),
    path("batch/<id:batch_id>/verify/", views.verification_screen, name="verify"),
    path("image/<id:image_id>/", views.image_file, name="image"),
    path("language/", views.interface_language, name="interface_language"),
    # The translated strings of the pages' scripts (a static-origin script: the CSP allows no inline one).
    path("i18n.js", views.javascript_catalog, name="javascript_catalog"),
    path("api/batch/<id:batch_id>/state/", apis.BatchStateAPI.as_view(), name="api_state"),
    path("api/batch/<id:batch_id>/rating/", apis.RatingSaveAPI.as_view(), name="api_rating"),
    path("api/batch/<id:batch_id>/open-writing/", apis.WritingOpenAPI.as_view(), name="api_open_writing"),
    path("api/batch/<id:batch_id>/draft/", apis.DraftSaveAPI.as_view(), name="api_draft"),
    path("api/batch/<id:batch_id>/submit/", apis.BatchSubmitAPI.as_view(), name="api_submit"),
    path("api/batch/<id:batch_id>/judgment/", apis.SxsJudgmentSaveAPI.as_view(), name="api_sxs_judgment"),
    path("api/batch/<id:batch_id>/report/", ImageReportAPI.as_view(), name="api_report"),
    path(
        "api/batch/<id:batch_id>/submit-judgments/",
        apis.JudgmentSubmitAPI.as_view(),
        name="api_submit_judgments",
    ),
]

# Entry links, language declaration, tutorial, completion, pilot feedback (annotation.workforce).
urlpatterns += workforce_urlpatterns

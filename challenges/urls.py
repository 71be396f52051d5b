from django.urls import path

from challenges import views

app_name = "challenges"

urlpatterns = [
    path("", views.home, name="home"),
    path("join/<token:token>/", views.join, name="join"),
    path("api-token/", views.api_token, name="api-token"),
    path("api/", views.api_help, name="api-help"),
    path("submissions/<id:submission_id>/", views.submission_detail, name="submission"),
    path("submissions/<id:submission_id>/select/", views.submission_toggle, name="submission-select"),
    path(
        "submissions/<id:submission_id>/withdraw/",
        views.submission_withdraw_toggle,
        name="submission-withdraw",
    ),
    path("teams/<id:team_id>/invite/", views.team_invite, name="team-invite"),
    path("phases/<id:phase_id>/submit/", views.submission_upload, name="submit"),
    path("phases/<id:phase_id>/leaderboard/", views.leaderboard, name="leaderboard"),
    path(
        "phases/<id:phase_id>/leaderboard.csv",
        views.leaderboard_export,
        {"fmt": "csv"},
        name="leaderboard-csv",
    ),
    path(
        "phases/<id:phase_id>/leaderboard.json",
        views.leaderboard_export,
        {"fmt": "json"},
        name="leaderboard-json",
    ),
    path("phases/<id:phase_id>/word-agreement/", views.word_agreement, name="word-agreement"),
    path("phases/<id:phase_id>/references.jsonl", views.references_download, name="references"),
    path("phases/<id:phase_id>/images.csv", views.images_manifest, {"fmt": "csv"}, name="images-csv"),
    path("phases/<id:phase_id>/images.json", views.images_manifest, {"fmt": "json"}, name="images-json"),
    path("phases/<id:phase_id>/images.zip", views.images_zip, name="images-zip"),
    path("phases/<id:phase_id>/images/<imagekey:key>", views.image_download, name="image"),
    path("<slug100:slug>/", views.benchmark_detail, name="benchmark"),
]

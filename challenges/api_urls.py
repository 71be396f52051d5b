"""URLs of the evaluation server's API, mounted at /api/challenges/ (config/urls.py)."""

from django.urls import path

from challenges import api

app_name = "challenges-api"

urlpatterns = [
    path("benchmarks/", api.BenchmarkListApi.as_view(), name="benchmarks"),
    path("phases/<id:phase_id>/submissions/", api.SubmissionCollectionApi.as_view(), name="submissions"),
    path("phases/<id:phase_id>/leaderboard/", api.LeaderboardApi.as_view(), name="leaderboard"),
    path("phases/<id:phase_id>/images/", api.PhaseImagesApi.as_view(), name="images"),
    path("phases/<id:phase_id>/images.zip", api.PhaseImagesZipApi.as_view(), name="images-zip"),
    path("phases/<id:phase_id>/images/<imagekey:key>", api.PhaseImageApi.as_view(), name="image"),
    path("submissions/<id:submission_id>/", api.SubmissionDetailApi.as_view(), name="submission"),
]

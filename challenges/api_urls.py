"""URLs of the evaluation server's API, mounted at /api/challenges/ (config/urls.py)."""

from django.urls import path

from challenges import api

app_name = "challenges-api"

urlpatterns = [
    path("benchmarks/", api.BenchmarkListApi.as_view(), name="benchmarks"),
    path("phases/<id:phase_id>/submissions/", api.SubmissionCollectionApi.as_view(), name="submissions"),
    path("phases/<id:phase_id>/leaderboard/", api.LeaderboardApi.as_view(), name="leaderboard"),
    path("submissions/<id:submission_id>/", api.SubmissionDetailApi.as_view(), name="submission"),
]

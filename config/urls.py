from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotation import views as annotation_views
from core import views as core_views
from evaluation.research import views_home as research_views

urlpatterns = [
    path("", core_views.home, name="home"),
    path("accounts/login/", core_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # New annotators choose their password here, from the one-time link their manager sends
    # (annotation.services.annotators.password_set_path; Django's password-reset tokens).
    path(
        "accounts/set-password/<uidb64>/<token>/",
        annotation_views.PasswordSetView.as_view(),
        name="password_set",
    ),
    path(
        "accounts/set-password/done/",
        annotation_views.PasswordSetDoneView.as_view(),
        name="password_reset_complete",
    ),
    path("work/", include("annotation.urls")),
    path("exports/", include("evaluation.research.exports.urls")),
    path("admin/", admin.site.urls),
    path("api/challenges/", include("challenges.api_urls")),
    path("api/", include("evaluation.research.api.urls")),
    path("challenges/", include("challenges.urls")),
    path("reports/", include("evaluation.research.reports.urls")),
    path("research/", research_views.research_home, name="research-home"),
    path("healthz", core_views.healthz, name="healthz"),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin's): answer, don't 404.
    path("favicon.ico", core_views.favicon),
]

# API paths answer Django's own 400/404/500 in the API's error shape; pages keep the site's error pages.
handler400 = "core.request_guard.bad_request"
handler404 = "core.request_guard.page_not_found"
handler500 = "core.request_guard.server_error"

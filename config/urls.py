from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from core import views as core_views

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="annotation:dashboard", permanent=False)),
    path("accounts/login/", core_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # New annotators choose their password here, from the one-time link their manager sends
    # (annotation.services.annotators.password_set_path; Django's password-reset tokens).
    path(
        "accounts/set-password/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_set",
    ),
    path(
        "accounts/set-password/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("work/", include("annotation.urls")),
    path("exports/", include("evaluation.research.urls_exports")),
    path("admin/", admin.site.urls),
    path("api/", include("evaluation.research.api.urls")),
    path("reports/", include("evaluation.research.urls_reports")),
    path("healthz", core_views.healthz, name="healthz"),
]

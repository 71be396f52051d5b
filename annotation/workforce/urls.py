"""The participant's pages, inside the annotation app's URL namespace (under /work/).

No URL carries a crowd id: entry links are found by their random token, everything else by the
signed-in annotator and a campaign or batch id that answers 404 when it is not theirs."""

from django.urls import path, re_path

from annotation.workforce import views

urlpatterns = [
    # The token: secrets.token_urlsafe(32) (43 characters); nothing else reaches the view.
    re_path(r"^join/(?P<token>[A-Za-z0-9_-]{20,64})/$", views.join, name="join"),
    path("campaign/<id:campaign_id>/languages/", views.languages, name="participant_languages"),
    path("campaign/<id:campaign_id>/not-eligible/", views.screened_out, name="screened_out"),
    path("campaign/<id:campaign_id>/tutorial/", views.tutorial, name="tutorial"),
    path("campaign/<id:campaign_id>/tutorial/feedback/", views.tutorial_feedback, name="tutorial_feedback"),
    path(
        "campaign/<id:campaign_id>/tutorial/image/<id:item_id>/",
        views.tutorial_image,
        name="tutorial_image",
    ),
    path("campaign/<id:campaign_id>/feedback/", views.pilot_feedback, name="pilot_feedback"),
    path("batch/<id:batch_id>/complete/", views.completion, name="completion"),
]

"""The JSON endpoints the annotator pages call (session auth, CSRF enforced by DRF).

One class per operation; an input serializer validates the shape, one service does the
work, domain errors become HTTP responses in ``core.errors.api_exception_handler``.
Fields a client must not set (annotator, state, item) are simply not part of any input.
"""

from __future__ import annotations

from django.urls import reverse
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors import annotator_for_user, batch_lease_expiry
from annotation.services import work
from core.access import is_annotator
from core.bounds import counter_field, id_field, seconds_field


class IsAnnotator(permissions.BasePermission):
    message = "Only annotators can do this."

    def has_permission(self, request, view):
        if not is_annotator(request.user):
            return False
        request.annotator = annotator_for_user(request.user)
        return True


class AnnotatorAPI(APIView):
    permission_classes = [permissions.IsAuthenticated, IsAnnotator]
    # Internal endpoints of the annotator pages, not part of the public research API schema.
    schema = None

    def validated(self, serializer_class, request):
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def saved(self, request, batch_id: int, payload: dict) -> Response:
        """The answer of a save, plus ``lease_expires_at``: the batch's lease after the save
        (saving renews a live lease), which the page's countdown shows."""
        payload["lease_expires_at"] = batch_lease_expiry(request.annotator, batch_id)
        return Response(payload)


class RatingSaveAPI(AnnotatorAPI):
    class Input(serializers.Serializer):
        assignment = id_field()
        value = serializers.CharField(max_length=20)
        seconds = seconds_field()

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        rating = work.rating_save(
            annotator=request.annotator,
            batch_id=batch_id,
            assignment_id=data["assignment"],
            value=data["value"],
            seconds=data.get("seconds"),
        )
        return self.saved(request, batch_id, {"assignment": rating.assignment_id, "value": rating.value})


class WritingOpenAPI(AnnotatorAPI):
    class Input(serializers.Serializer):
        rating_seconds = seconds_field()

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        batch = work.writing_open(
            annotator=request.annotator, batch_id=batch_id, rating_seconds=data.get("rating_seconds")
        )
        return Response(
            {"batch": batch.pk, "stage": batch.stage, "next": reverse("annotation:screen2", args=[batch.pk])}
        )


class DraftSaveAPI(AnnotatorAPI):
    class Input(serializers.Serializer):
        assignment = id_field()
        text = serializers.CharField(
            allow_blank=True, trim_whitespace=False, max_length=work.CAPTION_MAX_CHARS
        )
        revision = counter_field()
        seconds = seconds_field()

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        result = work.draft_save(
            annotator=request.annotator,
            batch_id=batch_id,
            assignment_id=data["assignment"],
            text=data["text"],
            revision=data["revision"],
            seconds=data.get("seconds"),
        )
        return self.saved(
            request,
            batch_id,
            {"revision": result.revision, "saved_at": result.saved_at, "stale": result.stale},
        )


class BatchSubmitAPI(AnnotatorAPI):
    class Input(serializers.Serializer):
        submit_key = serializers.CharField(max_length=64)
        writing_seconds = seconds_field()

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        batch = work.batch_submit(
            annotator=request.annotator,
            batch_id=batch_id,
            submit_key=data["submit_key"],
            writing_seconds=data.get("writing_seconds"),
        )
        return Response(
            {
                "batch": batch.pk,
                "stage": batch.stage,
                "late": batch.is_late,
                "next": reverse("annotation:batch", args=[batch.pk]),
            }
        )


class SxsJudgmentSaveAPI(AnnotatorAPI):
    """Save one side-by-side choice. The answer never carries the score: with the choice it
    would tell the page which side m2 is on."""

    class Input(serializers.Serializer):
        assignment = id_field()
        choice = serializers.CharField(max_length=20)
        seconds = seconds_field()

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        judgment = work.sxs_judgment_save(
            annotator=request.annotator,
            batch_id=batch_id,
            assignment_id=data["assignment"],
            choice=data["choice"],
            seconds=data.get("seconds"),
        )
        return self.saved(
            request, batch_id, {"assignment": judgment.assignment_id, "choice": judgment.choice}
        )


class JudgmentSubmitAPI(AnnotatorAPI):
    """Submit a side-by-side or verification batch."""

    class Input(serializers.Serializer):
        submit_key = serializers.CharField(max_length=64)
        seconds = seconds_field()

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        batch = work.judgment_batch_submit(
            annotator=request.annotator,
            batch_id=batch_id,
            submit_key=data["submit_key"],
            seconds=data.get("seconds"),
        )
        return Response(
            {
                "batch": batch.pk,
                "stage": batch.stage,
                "late": batch.is_late,
                "next": reverse("annotation:batch", args=[batch.pk]),
            }
        )

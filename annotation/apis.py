"""The JSON endpoints the annotator pages call (session auth, CSRF enforced by DRF).

One class per operation; an input serializer validates the shape, one service does the
work, domain errors become HTTP responses in ``core.errors.api_exception_handler``.
Fields a client must not set (annotator, state, item) are simply not part of any input.
"""

from __future__ import annotations

from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext_lazy
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.captions import CAPTION_MAX_CHARS
from annotation.quality import typing
from annotation.selectors import annotator_for_user, batch_lease_expiry, batch_state
from annotation.services import work
from core.access import is_annotator
from core.bounds import counter_field, id_field, seconds_field


class IsAnnotator(permissions.BasePermission):
    message = gettext_lazy("Only annotators can do this.")

    def has_permission(self, request, view):
        if not is_annotator(request.user):
            return False
        request.annotator = annotator_for_user(request.user)
        return True


class AnnotatorAPI(APIView):
    permission_classes = [permissions.IsAuthenticated, IsAnnotator]
    # Internal endpoints of the annotator pages, not part of the public research API schema.
    schema = None

    def finalize_response(self, request, response, *args, **kwargs):
        # Every answer, errors included, is about one moment of a batch: never kept by a cache.
        response = super().finalize_response(request, response, *args, **kwargs)
        add_never_cache_headers(response)
        return response

    def validated(self, serializer_class, request):
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def performed(self, service, request, batch_id: int):
        """``service`` done for the request's annotator on this batch with the validated ``Input``, whose
        fields are named (or sourced) as the service's parameters: each is named once, and one the client
        left out takes the service's default."""
        return service(annotator=request.annotator, batch_id=batch_id, **self.validated(self.Input, request))

    def saved(self, request, batch_id: int, payload: dict, lease=None) -> Response:
        """The answer of a save, plus ``lease_expires_at``: the batch's lease after the save
        (saving renews a live lease), which the page's countdown shows: as the service left it,
        else read."""
        if lease is None:
            lease = batch_lease_expiry(request.annotator, batch_id)
        payload["lease_expires_at"] = lease
        return Response(payload)

    def submitted(self, batch) -> Response:
        """The answer of a batch submit: where the batch stands, and the batch page to go on to."""
        return Response(
            {
                "batch": batch.pk,
                "stage": batch.stage,
                "late": batch.is_late,
                "next": reverse("annotation:batch", args=[batch.pk]),
            }
        )


class TypingInput(serializers.Serializer):
    """Screen 2's typing figures for one caption (annotation.quality.typing): counters since the
    first draft, first and last key as the browser's epoch milliseconds."""

    keystrokes = counter_field(required=False, default=0)
    paste_count = counter_field(required=False, default=0)
    pasted_chars = counter_field(required=False, default=0)
    first_key_ms = serializers.IntegerField(
        min_value=typing.MS_MIN, max_value=typing.MS_MAX, required=False, allow_null=True, default=None
    )
    last_key_ms = serializers.IntegerField(
        min_value=typing.MS_MIN, max_value=typing.MS_MAX, required=False, allow_null=True, default=None
    )


class ShownCaptionInput(serializers.Serializer):
    """One image as the submitting page shows it (see ``work.batch_submit``), bounded like a draft."""

    assignment = id_field()
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=CAPTION_MAX_CHARS)
    base_revision = counter_field()
    seconds = seconds_field()
    typing = TypingInput(required=False)


def answer_input(field: str) -> type[serializers.Serializer]:
    """The input of an answer save: the assignment, the answer ``field`` (a point of its scale) and the
    seconds spent on it."""
    fields = {
        "assignment": id_field(source="assignment_id"),
        field: serializers.CharField(max_length=20),
        "seconds": seconds_field(),
    }
    return type("Input", (serializers.Serializer,), fields)


class AnswerSaveAPI(AnnotatorAPI):
    """Save one assignment's answer with ``save``; the answer repeats the stored ``field`` (a point of its
    scale), with the batch's lease as the save left it."""

    field = ""

    def save(self, **arguments):
        raise NotImplementedError

    def post(self, request, batch_id: int):
        answer = self.performed(self.save, request, batch_id)
        payload = {"assignment": answer.assignment_id, self.field: getattr(answer, self.field)}
        return self.saved(request, batch_id, payload, lease=answer.lease_expires_at)


class RatingSaveAPI(AnswerSaveAPI):
    field = "value"
    Input = answer_input(field)
    save = staticmethod(work.rating_save)


class WritingOpenAPI(AnnotatorAPI):
    class Input(serializers.Serializer):
        rating_seconds = seconds_field()
        # The rating the page shows per assignment id: a stale tab's view is refused, not used.
        shown = serializers.DictField(child=serializers.CharField(max_length=20), required=False)

    def post(self, request, batch_id: int):
        batch = self.performed(work.writing_open, request, batch_id)
        return Response(
            {"batch": batch.pk, "stage": batch.stage, "next": reverse("annotation:screen2", args=[batch.pk])}
        )


class DraftSaveAPI(AnnotatorAPI):
    # A draft save carries what the submit shows of one image.
    Input = ShownCaptionInput

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        result = work.draft_save(
            annotator=request.annotator,
            batch_id=batch_id,
            assignment_id=data["assignment"],
            text=data["text"],
            base_revision=data["base_revision"],
            seconds=data.get("seconds"),
            typing=dict(data["typing"]) if data.get("typing") is not None else None,
        )
        return self.saved(
            request,
            batch_id,
            {"revision": result.revision, "saved_at": result.saved_at},
            lease=result.lease_expires_at,
        )


class BatchSubmitAPI(AnnotatorAPI):
    class Input(serializers.Serializer):
        submit_key = serializers.CharField(max_length=64)
        writing_seconds = seconds_field()
        # What the page shows, per image (see work.batch_submit); without it the drafts count.
        captions = serializers.ListField(child=ShownCaptionInput(), required=False, max_length=500)

    def post(self, request, batch_id: int):
        # Each caption is validated by the Input (ShownCaptionInput), and only once: a second, looser
        # serializer over the same list added nothing but its CPU.
        return self.submitted(self.performed(work.batch_submit, request, batch_id))


class SxsJudgmentSaveAPI(AnswerSaveAPI):
    """Save one side-by-side choice. The answer never carries the score: with the choice it
    would tell the page which side m2 is on."""

    field = "choice"
    Input = answer_input(field)
    save = staticmethod(work.sxs_judgment_save)


class JudgmentSubmitAPI(AnnotatorAPI):
    """Submit a side-by-side or verification batch."""

    class Input(serializers.Serializer):
        submit_key = serializers.CharField(max_length=64)
        seconds = seconds_field()
        # The choice the page shows per assignment id: a stale tab's view is refused, not stored.
        shown = serializers.DictField(child=serializers.CharField(max_length=20), required=False)

    def post(self, request, batch_id: int):
        return self.submitted(self.performed(work.judgment_batch_submit, request, batch_id))


class BatchStateAPI(AnnotatorAPI):
    """What a page re-checks when it comes back into view (see ``selectors.batch_state``)."""

    def get(self, request, batch_id: int):
        state = batch_state(request.annotator, batch_id)
        state["next"] = reverse("annotation:batch", args=[batch_id])
        return Response(state)

"""The annotator pages' endpoint for "report a problem with this image" (session auth, CSRF by DRF)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import serializers
from rest_framework.response import Response

from annotation.apis import AnnotatorAPI
from annotation.quality.models import ReportReason
from annotation.quality.reports import NOTE_MAX_CHARS, image_report
from core.bounds import id_field


class ImageReportAPI(AnnotatorAPI):
    """Report the image of one assignment of the annotator's batch. Idempotent: a second report of
    the same image answers the same and changes nothing. Another annotator's batch or image: 404."""

    class Input(serializers.Serializer):
        assignment = id_field()
        reason = serializers.ChoiceField(choices=ReportReason.choices)
        note = serializers.CharField(max_length=NOTE_MAX_CHARS, required=False, allow_blank=True, default="")

    def post(self, request, batch_id: int):
        data = self.validated(self.Input, request)
        result = image_report(
            annotator=request.annotator,
            batch_id=batch_id,
            assignment_id=data["assignment"],
            reason=data["reason"],
            note=data["note"],
        )
        return Response(
            {
                "assignment": data["assignment"],
                "reason": result.report.reason,
                "created": result.created,
                "message": _(
                    "Thank you. The manager will look at this image. You may rate it NOT-ENOUGH-INFO, "
                    "or leave its caption empty."
                ),
            }
        )

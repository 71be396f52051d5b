"""The evaluation server's REST API (``/api/challenges/``), token or session authentication:

- ``GET benchmarks/``: the benchmarks open to the caller, with their phases, their limits and the
  caller's team's use of them (``usage``: today, total, scoring now);
- ``GET|POST phases/<id>/submissions/``: the team's submissions of a phase; upload one (multipart:
  ``file``, ``method_name``, ``language`` for a COCO results file, ``description``, ``paper_url``,
  ``code_url``); a refused file answers 400 with its problems and uses no quota; a body declared over
  ``SUBMISSION_MAX_BYTES`` (and the form's fields) answers 413 before it is read; past
  ``SUBMISSION_REFUSED_RATE`` refused files of the account or team, 429 with ``Retry-After``;
- ``GET submissions/<id>/``: one of the team's submissions with the scores its team may see;
- ``GET phases/<id>/leaderboard/?language=&metric=&refs=``: a leaderboard the caller may see;
- ``GET phases/<id>/images/``: the phase's images (image id, file name, bytes, sha256, width, height,
  address of each, and of them all as one zip), for the benchmark's teams and hosts;
- ``GET phases/<id>/images.zip`` and ``GET phases/<id>/images/<image id>``: those files.
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.views import image_file_response
from challenges import selectors
from challenges.images import phase_image, phase_manifest, zip_stream
from challenges.services import submission_from_upload, submission_upload_check
from core.errors import NotFound
from core.request_guard import accepts_files, files_too_large


def _submission_out(submission, user) -> dict:
    return {
        "id": submission.pk,
        "phase": submission.phase_id,
        "method_name": submission.method_name,
        "languages": submission.languages,
        "status": submission.status,
        "progress": f"{submission.chunks_done}/{submission.chunks_total}",
        "selected": submission.is_selected,
        "withdrawn": submission.withdrawn_at is not None,
        "created_at": submission.created_at,
        "scores": [
            {
                "language": s.language.code,
                "reference_count": s.reference_count,
                "held_out": s.held_out,
                "fresh": s.fresh,
                "split": s.split,
                "metric": s.metric,
                "value": s.value,
                "low": s.low,
                "high": s.high,
                "n_images": s.n_images,
                "signature": s.signature,
            }
            for s in selectors.submission_scores(submission, user=user)
        ],
    }


class BenchmarkListApi(APIView):
    @extend_schema(
        summary="Benchmarks open to you, with their phases, submission limits and your team's use of them",
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request):
        data = []
        for b in selectors.benchmarks_for(request.user).prefetch_related("phases"):
            team = selectors.team_for(request.user, b)
            data.append(
                {
                    "slug": b.slug,
                    "name": b.name,
                    "description": b.description,
                    "team": team.name if team else None,
                    "phases": [
                        {
                            "id": p.pk,
                            "name": p.name,
                            "kind": p.kind,
                            "is_open": p.is_open,
                            "max_per_day": p.max_per_day,
                            "max_total": p.max_total,
                            "max_concurrent": p.max_concurrent,
                            # The team's use of those limits (null for a caller in no team of it).
                            "usage": selectors.team_usage(p, team).as_dict() if team else None,
                        }
                        for p in b.phases.order_by("pk")
                    ],
                }
            )
        return Response(data)


@accepts_files("SUBMISSION_MAX_BYTES")
class SubmissionCollectionApi(APIView):
    parser_classes = [MultiPartParser]

    class SubmissionUploadSerializer(serializers.Serializer):
        file = serializers.FileField()
        method_name = serializers.CharField(max_length=200)
        language = serializers.CharField(max_length=16, required=False, allow_blank=True, default="")
        description = serializers.CharField(required=False, allow_blank=True, default="")
        paper_url = serializers.URLField(required=False, allow_blank=True, default="")
        code_url = serializers.URLField(required=False, allow_blank=True, default="")

    @extend_schema(summary="Your team's submissions to a phase", responses=OpenApiTypes.OBJECT)
    def get(self, request, phase_id):
        phase = selectors.phase_get(user=request.user, phase_id=phase_id)
        return Response(
            [
                _submission_out(s, request.user)
                for s in selectors.submissions_of_team(user=request.user, phase=phase)
            ]
        )

    @extend_schema(
        summary="Submit a results file to a phase (checked before it counts toward the limits)",
        request={"multipart/form-data": SubmissionUploadSerializer},
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request, phase_id):
        phase = selectors.phase_get(user=request.user, phase_id=phase_id)
        # Before the body is read (with a token; session authentication's CSRF check reads it first).
        submission_upload_check(phase=phase, user=request.user)
        serializer = self.SubmissionUploadSerializer(data=request.data)
        files_too_large(request)
        serializer.is_valid(raise_exception=True)
        submission = submission_from_upload(phase=phase, user=request.user, cleaned=serializer.validated_data)
        submission.refresh_from_db()  # its state as the queue left it (scored already where tasks run eagerly)
        return Response(_submission_out(submission, request.user), status=status.HTTP_201_CREATED)


class SubmissionDetailApi(APIView):
    @extend_schema(
        summary="One of your team's submissions: its state and scores", responses=OpenApiTypes.OBJECT
    )
    def get(self, request, submission_id):
        submission = selectors.submission_get(user=request.user, submission_id=submission_id)
        return Response(_submission_out(submission, request.user))


class LeaderboardApi(APIView):
    permission_classes = [AllowAny]  # visibility is the phase's: hosts, participants or public

    @extend_schema(summary="A phase's leaderboard, as far as you may see it", responses=OpenApiTypes.OBJECT)
    def get(self, request, phase_id):
        phase = selectors.phase_get(user=request.user, phase_id=phase_id)
        if not selectors.leaderboard_visible(request.user, phase):
            raise NotFound("No such leaderboard.")
        board = selectors.leaderboard_asked(phase=phase, user=request.user, params=request.query_params)
        return Response(
            {
                "phase": phase.pk,
                "language": board.language,
                "metric": board.metric,
                "split": board.split,
                "reference_count": board.reference_count,
                "comparison": board.comparison,
                "clip_trust": board.clip_trust.as_dict() if board.clip_trust else None,
                # What was asked for and could not be shown, and what is shown instead.
                "notes": [str(note) for note in board.notes],
                "rows": selectors.leaderboard_rows(board),
            }
        )


def _images_phase(request, phase_id):
    phase = selectors.phase_get(user=request.user, phase_id=phase_id)
    if not selectors.images_visible(request.user, phase):
        raise NotFound("No such phase.")
    return phase


class PhaseImagesApi(APIView):
    @extend_schema(
        summary="A phase's images: the ids a result file must cover, with each file's name, size, sha256 and "
        "address, and the address of them all as one zip (teams of the benchmark and hosts)",
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, phase_id):
        phase = _images_phase(request, phase_id)
        rows = [row.as_dict() for row in phase_manifest(phase)]
        for row in rows:
            row["url"] = request.build_absolute_uri(
                reverse("challenges-api:image", args=[phase.pk, row["image_id"]])
            )
        return Response(
            {
                "phase": phase.pk,
                "count": len(rows),
                "zip": request.build_absolute_uri(reverse("challenges-api:images-zip", args=[phase.pk])),
                "images": rows,
            }
        )


class PhaseImagesZipApi(APIView):
    @extend_schema(
        summary="Every image of a phase as one zip (made while it is sent)", responses=OpenApiTypes.BINARY
    )
    def get(self, request, phase_id):
        phase = _images_phase(request, phase_id)
        response = StreamingHttpResponse(zip_stream(phase_manifest(phase)), content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="images-{phase.pk}.zip"'
        return response


class PhaseImageApi(APIView):
    @extend_schema(
        operation_id="challenges_phases_image_retrieve",
        summary="One image of a phase, by its id",
        responses=OpenApiTypes.BINARY,
    )
    def get(self, request, phase_id, key):
        image = phase_image(_images_phase(request, phase_id), key)
        if image is None:
            raise NotFound("No such image in this phase.")
        return image_file_response(image)


__all__ = [
    "BenchmarkListApi",
    "LeaderboardApi",
    "PhaseImageApi",
    "PhaseImagesApi",
    "PhaseImagesZipApi",
    "SubmissionCollectionApi",
    "SubmissionDetailApi",
]

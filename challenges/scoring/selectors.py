"""Reads the scoring of a submission needs: the phase's images, the submitted captions, the references."""

from __future__ import annotations

from challenges.models import BenchmarkLanguage, Phase, SubmissionCaption
from evaluation.runs.selectors import reference_texts


def phase_image_ids(phase: Phase) -> list[int]:
    """The ids of the phase's images, sorted (the order of every per-image score list)."""
    return sorted(phase.image_set.images.values_list("pk", flat=True))


def phase_image_keys(phase: Phase) -> dict[str, int]:
    """image key -> image id, for the phase's images (what a submission file names)."""
    return dict(phase.image_set.images.values_list("key", "pk"))


def submission_captions(*, submission_id: int, language_id: int) -> dict[int, str]:
    return dict(
        SubmissionCaption.objects.filter(submission_id=submission_id, language_id=language_id).values_list(
            "image_id", "text"
        )
    )


def phase_references(
    phase: Phase, language_id: int, image_ids: list[int], *, fresh: bool = False
) -> dict[int, list[str]] | None:
    """image id -> the benchmark's reference captions in the language (never shown to a team); with
    ``fresh``, its fresh references (None where the language has none)."""
    link = BenchmarkLanguage.objects.select_related("reference_set", "fresh_reference_set").get(
        benchmark_id=phase.benchmark_id, language_id=language_id
    )
    if fresh:
        if link.fresh_reference_set is None:
            return None
        return reference_texts(link.fresh_reference_set, image_ids)
    return reference_texts(link.reference_set, image_ids)

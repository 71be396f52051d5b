"""The CLIP model a job is planned with, as a manager's form or a command gives it, resolved against the
``CLIP_*`` settings in one place for retrieval, zero-shot and foil checks (and the image orientation for
metric runs too)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from core.errors import ValidationFailed
from evaluation.metrics.clip.embedding import image_orientation_check


def clip_orientation(image_orientation: str | None) -> str:
    """The image orientation a job embeds its images with: the one given, or the CLIP_IMAGE_ORIENTATION
    setting when none is (None or ""). Raises ValidationFailed for an unknown one."""
    orientation = image_orientation or settings.CLIP_IMAGE_ORIENTATION
    try:
        image_orientation_check(orientation)
    except ValueError as exc:
        raise ValidationFailed(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
    return orientation


@dataclass(frozen=True)
class ClipModelChoice:
    """An open_clip ``model`` with its ``pretrained`` tag or ``checkpoint`` (None: the CLIP_* settings;
    a named model brings its own weights), the ``prompt_prefix`` (None: CLIP_PROMPT_PREFIX) and the
    ``image_orientation`` (None or "": CLIP_IMAGE_ORIENTATION)."""

    model: str | None = None
    pretrained: str | None = None
    checkpoint: str | None = None
    prompt_prefix: str | None = None
    image_orientation: str | None = None

    @property
    def typed(self) -> bool:
        """Whether a model, tag or checkpoint is given (which a registered model's choice excludes)."""
        return any((value or "").strip() for value in (self.model, self.pretrained, self.checkpoint))

    def orientation(self) -> str:
        return clip_orientation(self.image_orientation)

    def weights(self) -> dict:
        """The ``clip_model``, ``clip_pretrained`` and ``clip_checkpoint`` parameters: the CLIP_* settings
        unless a model is named. Raises ValidationFailed when the model resolves to an empty name."""
        model, pretrained, checkpoint = self.model, self.pretrained, self.checkpoint
        if model is None or (model == settings.CLIP_MODEL and pretrained is None and checkpoint is None):
            model = settings.CLIP_MODEL
            pretrained = settings.CLIP_PRETRAINED if pretrained is None else pretrained
            checkpoint = settings.CLIP_CHECKPOINT if checkpoint is None else checkpoint
        model, pretrained, checkpoint = model.strip(), (pretrained or "").strip(), (checkpoint or "").strip()
        if not model:
            raise ValidationFailed("Name the CLIP model to check.")
        return {"clip_model": model, "clip_pretrained": pretrained, "clip_checkpoint": checkpoint}

    def params(self, *, weights: dict | None = None, prompt_prefix: str | None = None) -> dict:
        """A check's CLIP parameters: ``weights`` (a registered model's; None: :meth:`weights`), the prompt
        prefix (``prompt_prefix`` when the check fixes it, else the choice's), the orientation and the
        chunk size. The orientation is validated first, then the weights."""
        orientation = self.orientation()
        if prompt_prefix is None:
            prompt_prefix = settings.CLIP_PROMPT_PREFIX if self.prompt_prefix is None else self.prompt_prefix
        return {
            **(self.weights() if weights is None else weights),
            "clip_prompt_prefix": prompt_prefix,
            "image_orientation": orientation,
            "chunk_size": max(1, int(settings.METRIC_CLIP_CHUNK_SIZE)),
        }


# The choice of a job that names nothing: the CLIP_* settings throughout.
CLIP_SETTINGS = ClipModelChoice()

"""The CLIP model a job is planned with, as a manager's form or a command gives it, resolved against the
``CLIP_*`` settings in one place for retrieval, zero-shot and foil checks (and the image orientation for
metric runs too)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from core.errors import NotFound, ValidationFailed
from evaluation.metrics.clip.compat import ensure_torchvision_loadable
from evaluation.metrics.clip.embedding import image_orientation_check
from evaluation.models import ClipModel


def clip_orientation(image_orientation: str | None) -> str:
    """The image orientation a job embeds its images with: the one given, or the CLIP_IMAGE_ORIENTATION
    setting when none is (None or ""). Raises ValidationFailed for an unknown one."""
    orientation = image_orientation or settings.CLIP_IMAGE_ORIENTATION
    try:
        image_orientation_check(orientation)
    except ValueError as exc:
        raise ValidationFailed(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
    return orientation


def clip_model_registered(value: str | int | None) -> ClipModel | None:
    """The registered CLIP model (``ClipModel``) of this name or id; None when none is named. Raises
    NotFound naming the registered ones."""
    value = str(value or "").strip()
    if not value:
        return None
    found = ClipModel.objects.filter(name=value).first()
    if found is None and value.isdigit():
        found = ClipModel.objects.filter(pk=int(value)).first()
    if found is None:
        names = list(ClipModel.objects.values_list("name", flat=True)[:20])
        raise NotFound(
            f"There is no registered CLIP model “{value}” (registered: {', '.join(names) or 'none'})."
        )
    return found


def clip_architecture_check(model: str) -> None:
    """A typed model must be an architecture open_clip knows (or one it reads from the hub or a
    folder), so that a job cannot be accepted now and fail on the workers with "unknown CLIP model";
    a registered model's name, or the architecture only a registered model's config defines (the
    demo's tiny model), gets a pointer to the registered-model choice. Raises ValidationFailed."""
    registered = ClipModel.objects.filter(name=model).first()
    if registered is not None:
        raise ValidationFailed(
            f"“{model}” is a registered CLIP model, not an open_clip architecture: choose it as the "
            "registered CLIP model and leave the model, tag and checkpoint empty."
        )
    defined = ClipModel.objects.filter(model_name=model).exclude(architecture={}).first()
    if defined is not None:
        raise ValidationFailed(
            f"“{model}” is the architecture of the registered CLIP model “{defined.name}”, which the workers "
            f"only know from its registration: choose “{defined.name}” as the registered CLIP model and "
            "leave the model, tag and checkpoint empty."
        )
    if model.startswith(("hf-hub:", "local-dir:")):
        return
    try:
        ensure_torchvision_loadable()
        import open_clip
    except (ImportError, RuntimeError):  # no CLIP extras in this process: the workers judge the name
        return
    if model not in open_clip.list_models():
        raise ValidationFailed(
            f"“{model}” is not an open_clip architecture; choose a registered CLIP model instead, or "
            "an architecture of open_clip.list_models() (e.g. xlm-roberta-base-ViT-B-32)."
        )


@dataclass(frozen=True)
class ClipModelChoice:
    """A ``registered`` CLIP model (a ``ClipModel``'s name or id: its architecture, config and weights)
    or an open_clip ``model`` with its ``pretrained`` tag or ``checkpoint`` (None: the CLIP_* settings;
    a named model brings its own weights), the ``prompt_prefix`` (None: CLIP_PROMPT_PREFIX) and the
    ``image_orientation`` (None or "": CLIP_IMAGE_ORIENTATION)."""

    model: str | None = None
    pretrained: str | None = None
    checkpoint: str | None = None
    prompt_prefix: str | None = None
    image_orientation: str | None = None
    registered: str | int | None = None

    @property
    def typed(self) -> bool:
        """Whether a model, tag or checkpoint is given (which a registered model's choice excludes)."""
        return any((value or "").strip() for value in (self.model, self.pretrained, self.checkpoint))

    def orientation(self) -> str:
        return clip_orientation(self.image_orientation)

    def registered_model(self) -> ClipModel | None:
        """The registered model chosen (None when none is). Raises NotFound for an unknown one and
        ValidationFailed when a model, tag or checkpoint is typed beside it."""
        if not str(self.registered or "").strip():
            return None
        if self.typed:
            raise ValidationFailed(
                "Choose a registered CLIP model or type an open_clip model with its weights, not both."
            )
        return clip_model_registered(self.registered)

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
        """A check's CLIP parameters: ``weights`` (None: the registered model's ``clip_params``, with its
        architecture's config, else :meth:`weights`), the prompt prefix (``prompt_prefix`` when the check
        fixes it, else the choice's), the orientation and the chunk size. The orientation is validated
        first, then the weights (raising as :meth:`registered_model` and :meth:`weights` do)."""
        orientation = self.orientation()
        if prompt_prefix is None:
            prompt_prefix = settings.CLIP_PROMPT_PREFIX if self.prompt_prefix is None else self.prompt_prefix
        if weights is None:
            registered = self.registered_model()
            if registered is not None:
                weights = registered.clip_params
            else:
                weights = self.weights()
                typed = (self.model or "").strip()
                if typed and typed != settings.CLIP_MODEL:
                    clip_architecture_check(typed)
        return {
            **weights,
            "clip_prompt_prefix": prompt_prefix,
            "image_orientation": orientation,
            "chunk_size": max(1, int(settings.METRIC_CLIP_CHUNK_SIZE)),
        }


# The choice of a job that names nothing: the CLIP_* settings throughout.
CLIP_SETTINGS = ClipModelChoice()

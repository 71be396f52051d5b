"""Create, enqueue and resume retrieval checks.

A check is planned (every reason it cannot run is found before anything is stored), then stored
with its chunks in one transaction and sent to the workers on commit by the job engine
(:mod:`core.jobs.engine`), for the kind registered in :mod:`evaluation.retrieval.tasks`. Chunks: ``images`` (the distinct images of every language),
``texts`` (one language's captions) and, once those are done, one ``recall`` chunk per language.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

from django.db import transaction
from django.db.models import Q

from annotation.models import Campaign, CampaignKind, Image, Language
from core.errors import ValidationFailed
from core.jobs.engine import ResumeResult, job_enqueue, job_resume, job_units_store
from evaluation.clip_choice import CLIP_SETTINGS, ClipModelChoice
from evaluation.human.selectors import reference_captions
from evaluation.metrics.clip.trust import clip_model_key
from evaluation.models import (
    ReferenceSet,
    RetrievalCheck,
    RetrievalSource,
)
from evaluation.models.fields import starter
from evaluation.retrieval.compute import RETRIEVAL_CHUNKS
from evaluation.retrieval.tasks import RETRIEVAL_CHECK
from evaluation.runs.selectors import reference_texts

KEYS_SHOWN = 5
NAME_MAX_LENGTH = RetrievalCheck._meta.get_field("name").max_length


def _default_name(model: str, kind: str, names: list[str]) -> str:
    """“<model> on the reference sets a, b” within the name's length: the data names that fit, then
    how many more, never a name cut mid-word."""
    noun = kind if len(names) == 1 else f"{kind}s"
    for shown in range(len(names), 0, -1):
        rest = len(names) - shown
        name = f"{model} on {noun} {', '.join(names[:shown])}" + (f" and {rest} more" if rest else "")
        if len(name) <= NAME_MAX_LENGTH:
            return name
    name = f"{model} on {len(names)} {noun}"
    return name if len(name) <= NAME_MAX_LENGTH else f"{len(names)} {noun}"


@dataclass
class CheckPlan:
    """A validated check before anything is stored: per language, the (image id, caption) pairs."""

    name: str
    source: str
    campaigns: list[Campaign] = field(default_factory=list)
    reference_sets: list[ReferenceSet] = field(default_factory=list)
    captions: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    @property
    def languages(self) -> list[str]:
        return list(self.captions)

    @property
    def image_ids(self) -> list[int]:
        return sorted({image_id for pairs in self.captions.values() for image_id, _ in pairs})


def _lookup(model, values, what: str, **filters):
    """Objects by id or exact name, in the order given; ValidationFailed naming the unknown ones."""
    found, unknown = [], []
    for value in dict.fromkeys(str(v).strip() for v in values if str(v).strip()):
        query = Q(name=value) | (Q(pk=int(value)) if value.isdigit() else Q())
        obj = model.objects.filter(query, **filters).first()
        (found if obj is not None else unknown).append(obj if obj is not None else value)
    if unknown:
        raise ValidationFailed(f"Unknown {what}: {', '.join(unknown)}.")
    return found


def _campaign_captions(campaigns: list[Campaign]) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    rows = (
        reference_captions(campaign_ids=[c.pk for c in campaigns])
        .order_by("language__code", "image_id", "pk")
        .values_list("language__code", "image_id", "text")
    )
    for code, image_id, text in rows:
        if text.strip():
            out[code].append((image_id, text))
    return dict(out)


def retrieval_check_plan(
    *,
    campaigns: list[str] | None = None,
    reference_sets: list[str] | None = None,
    languages: list[str] | None = None,
    name: str = "",
    clip: ClipModelChoice = CLIP_SETTINGS,
    clip_model_name: str | None = None,
) -> CheckPlan:
    """Check everything a retrieval check needs and gather its captions; stores nothing.

    The data: the written captions of caption ``campaigns`` (ids or names) in the languages they are
    in, or the captions of ``reference_sets`` (ids or names, one per language; imported from XM3600
    files or a campaign's). ``languages`` keeps only those codes, each of which must have captions.
    The model, as for metric runs: ``clip_model_name`` (or ``clip.registered``) names a registered CLIP
    model (``ClipModel``: the demo's, a fine-tuned one; by name or id) whose weights and architecture the
    check uses; otherwise ``clip``'s model (an open_clip architecture) with its pretrained tag or checkpoint, by default the ``CLIP_*``
    settings; ``clip`` gives the prompt prefix and image orientation in both cases. Raises NotFound for an unknown registered model; ValidationFailed when a registered
    model and a typed one are both given, when a typed name is not an open_clip architecture (a
    registered model's name typed there says to choose it instead), when: both or neither source is named, a name is unknown, a campaign is not a caption campaign,
    two reference sets share a language, a language has no captions or captions of fewer than 2
    images (retrieval among one image is always right), or an image has no stored file.
    """
    campaigns = [c for c in campaigns or [] if str(c).strip()]
    reference_sets = [r for r in reference_sets or [] if str(r).strip()]
    if bool(campaigns) == bool(reference_sets):
        raise ValidationFailed("Name caption campaigns or reference sets to check on (one of the two).")
    clip.orientation()  # an unknown orientation is the first thing said
    wanted = list(dict.fromkeys(code.strip() for code in languages or [] if code.strip()))
    unknown = sorted(
        set(wanted) - set(Language.objects.filter(code__in=wanted).values_list("code", flat=True))
    )
    if unknown:
        raise ValidationFailed(f"Unknown language(s): {', '.join(unknown)}.")

    if len(name.strip()) > NAME_MAX_LENGTH:
        raise ValidationFailed(
            f"A check's name has at most {NAME_MAX_LENGTH} characters ({len(name.strip())} given)."
        )
    plan = CheckPlan(name=name.strip(), source="")
    if campaigns:
        plan.source = RetrievalSource.CAMPAIGNS
        plan.campaigns = _lookup(Campaign, campaigns, "campaign(s)")
        not_caption = [c.name for c in plan.campaigns if c.kind != CampaignKind.CAPTION]
        if not_caption:
            raise ValidationFailed(
                f"Not caption campaigns (they hold no written captions): {', '.join(not_caption)}."
            )
        found = _campaign_captions(plan.campaigns)
        where = f"the campaign(s) {', '.join(c.name for c in plan.campaigns)}"
        data_names = ("campaign", [c.name for c in plan.campaigns])
    else:
        plan.source = RetrievalSource.REFERENCE_SETS
        plan.reference_sets = _lookup(ReferenceSet, reference_sets, "reference set(s)")
        found = {}
        for reference_set in plan.reference_sets:
            code = reference_set.language.code
            if code in found:
                raise ValidationFailed(
                    f"Two reference sets are in {code}; name one per language ({reference_set.name})."
                )
            found[code] = [
                (image_id, text)
                for image_id, texts in sorted(reference_texts(reference_set).items())
                for text in texts
            ]
        where = f"the reference set(s) {', '.join(r.name for r in plan.reference_sets)}"
        data_names = ("reference set", [r.name for r in plan.reference_sets])

    codes = wanted or sorted(found)
    if not codes:
        raise ValidationFailed(f"There are no captions in {where}: nothing to retrieve with.")
    problems = []
    for code in codes:
        pairs = found.get(code, [])
        images = {image_id for image_id, _ in pairs}
        if not pairs:
            problems.append(f"{code} has no captions in {where}")
        elif len(images) < 2:
            problems.append(
                f"{code} has captions of only {len(images)} image: retrieval needs at least 2 images per language"
            )
        else:
            plan.captions[code] = pairs
    if problems:
        raise ValidationFailed("Cannot check retrieval: " + "; ".join(problems) + ".")
    without_file = sorted(
        Image.objects.filter(pk__in=plan.image_ids)
        .filter(Q(file="") | Q(content_hash__isnull=True))
        .values_list("key", flat=True)
    )
    if without_file:
        shown = ", ".join(without_file[:KEYS_SHOWN]) + (", …" if len(without_file) > KEYS_SHOWN else "")
        raise ValidationFailed(
            f"A retrieval check needs the image files: {len(without_file)} images have none ({shown})."
        )

    if (clip_model_name or "").strip():
        clip = replace(clip, registered=clip_model_name)
    registered = clip.registered_model()
    if registered is not None:
        plan.params = clip.params(weights=registered.clip_params)
        plan.name = plan.name or _default_name(registered.name, *data_names)
        return plan
    plan.params = clip.params()  # a typed name is checked; the CLIP_* settings are the operator's
    plan.name = plan.name or _default_name(plan.params["clip_model"], *data_names)
    return plan


def planned_model_key(params: dict) -> str:
    """The model key of a planned check's CLIP params (before a worker loads the model and knows its id)."""
    return clip_model_key(
        model=params["clip_model"],
        pretrained=params["clip_pretrained"],
        checkpoint=params["clip_checkpoint"],
    )


def planned_check_fields(plan, user) -> dict:
    """What every CLIP check (retrieval, zero-shot, foil) is created with from its plan (which has a
    ``name``, ``languages`` and ``params``): those, its model key and who started it."""
    return {
        "name": plan.name,
        "languages": plan.languages,
        "params": plan.params,
        "model_key": planned_model_key(plan.params),
        "created_by": starter(user),
    }


def retrieval_check_store(*, plan: CheckPlan, user=None, enqueue: bool = True) -> RetrievalCheck:
    """Store a planned check and its embedding chunks; send them to the workers on commit.

    Image chunks come first (their embeddings are shared with metric runs), then each language's
    text chunks; the recall chunks are created now and sent once every embedding chunk is done.
    Raises :class:`JobsUnavailable` (after the check is stored and marked failed) when the broker is
    unreachable. In eager mode (tests, the embedded default) the check has run when this returns.
    """
    size = plan.params["chunk_size"]
    with transaction.atomic():
        check = RetrievalCheck.objects.create(source=plan.source, **planned_check_fields(plan, user))
        check.campaigns.set(plan.campaigns)
        check.reference_sets.set(plan.reference_sets)
        chunks = RETRIEVAL_CHUNKS.unsaved(
            check,
            images=plan.image_ids,
            texts={code: [list(pair) for pair in pairs] for code, pairs in plan.captions.items()},
            size=size,
        )
        job_units_store(RETRIEVAL_CHECK, job=check, units=chunks, enqueue=enqueue)
    return check


def retrieval_check_create(*, user=None, enqueue: bool = True, **plan_args) -> RetrievalCheck:
    """Plan (:func:`retrieval_check_plan`, which raises before anything is stored), then store and enqueue."""
    return retrieval_check_store(plan=retrieval_check_plan(**plan_args), user=user, enqueue=enqueue)


def retrieval_check_enqueue(*, check: RetrievalCheck) -> None:
    """Send the check's pending chunks that may run now (images, then texts; recall chunks once every
    embedding chunk is done), once the current transaction commits."""
    job_enqueue(RETRIEVAL_CHECK, job=check)


def retrieval_check_resume(*, check_id: int, enqueue: bool = True) -> ResumeResult:
    """Put every chunk that is not done and has no live worker back to pending, and send those that
    may run (on commit). Locks the check row. Idempotent: a succeeded check is left as it is; a check
    whose chunks are all done is finalised. Raises NotFound, and JobsUnavailable from the commit."""
    return job_resume(RETRIEVAL_CHECK, job_id=check_id, enqueue=enqueue)

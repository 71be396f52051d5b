"""Import the files of a zero-shot or foil check, then store and enqueue it; resume a stopped one.

A check is planned first (every file parsed and every reason it cannot run found, nothing stored),
then stored with its chunks in one transaction and sent to the workers on commit by the job engine.
Chunks: ``images`` (the distinct images), ``texts`` (one language's prompts or caption/foil pairs),
then one ``score`` chunk per language once every embedding chunk is done.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePath

from django.conf import settings
from django.db import transaction

from annotation.models import Image
from core.errors import ValidationFailed
from core.jobs.engine import ResumeResult, job_resume, job_units_store
from evaluation.clip_checks.compute import PROBE_CHUNKS
from evaluation.clip_checks.files import (
    DEFAULT_MIN_VOTES,
    ProbeFileError,
    language_code_ok,
    parse_class_labels,
    parse_foils,
    parse_labelled_images,
    parse_templates,
)
from evaluation.clip_checks.tasks import CLIP_PROBE_CHECK
from evaluation.clip_choice import CLIP_SETTINGS, ClipModelChoice
from evaluation.metrics.clip.trust import BASELINE_LANGUAGE
from evaluation.models import ClipProbe, ClipProbeCheck
from evaluation.retrieval.plan import planned_check_fields

KEYS_SHOWN = 5
PLAIN_LABEL = "{}"
_LANGUAGE_IN_NAME = re.compile(r"^([A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})?)(?:[_.]|$)")


@dataclass
class ProbePlan:
    """A validated check before anything is stored."""

    probe: str
    name: str
    languages: list[str]
    params: dict
    data: dict
    images: list[list[int]] = field(
        default_factory=list
    )  # zero-shot: [image id, class id]; foils: [image id]
    texts: dict[str, list[list]] = field(default_factory=dict)  # language -> chunk rows


def _shown(values: list[str]) -> str:
    return ", ".join(values[:KEYS_SHOWN]) + (", …" if len(values) > KEYS_SHOWN else "")


def _images_by_name(names: list[str]) -> tuple[dict[str, int], list[str], list[str]]:
    """Image id of each name (an image's key, or its file name without the extension, matched to a
    key); the names of no image, and of images without a stored file."""
    wanted = set(names) | {PurePath(n).stem for n in names}
    rows = Image.objects.filter(key__in=wanted).values_list("key", "pk", "file", "content_hash")
    by_key = {key: (pk, bool(file) and bool(digest)) for key, pk, file, digest in rows}
    found, unknown, without_file = {}, [], []
    for name in names:
        hit = by_key.get(name) or by_key.get(PurePath(name).stem)
        if hit is None:
            unknown.append(name)
        elif not hit[1]:
            without_file.append(name)
        else:
            found[name] = hit[0]
    return found, unknown, without_file


def _model_label(params: dict) -> str:
    """What a check's default name calls its model: the registered model's name, else the architecture."""
    return params.get("clip_registered") or params["clip_model"]


def _wanted(languages) -> list[str]:
    return list(dict.fromkeys(code.strip() for code in languages or [] if code.strip()))


def zeroshot_check_plan(
    *,
    labels: tuple[str, bytes | str],
    images: tuple[str, bytes | str],
    templates: tuple[str, bytes | str] | None = None,
    languages: list[str] | None = None,
    name: str = "",
    clip: ClipModelChoice = CLIP_SETTINGS,
) -> ProbePlan:
    """Parse and check a zero-shot import; stores nothing.

    ``labels``, ``images``, ``templates``: ``(file name, content)`` (formats in
    :mod:`evaluation.clip_checks.files`). ``languages`` keeps only those codes; English's labels are
    always embedded when the file has them, as the baseline each language is compared with. ``clip``:
    the model (a registered one's parameters, config included, or a typed architecture, which is
    checked) and image orientation (its prompt prefix is not used: the templates are the prompts).
    Raises NotFound for an unknown registered model; ValidationFailed for a model the workers would not
    know (:meth:`ClipModelChoice.params`), for a malformed file (naming its lines), an unknown or file-less image, a
    language not in the labels, or a language none of whose classes has a labelled image.
    """
    try:
        class_labels = parse_class_labels(labels[1], labels[0] or "class labels")
        labelled = parse_labelled_images(images[1], images[0] or "labelled images")
        prompts = parse_templates(templates[1], templates[0] or "prompt templates") if templates else {}
    except ProbeFileError as exc:
        raise ValidationFailed(f"Cannot import: {exc}.") from None
    wanted = _wanted(languages) or sorted(class_labels)
    unknown_codes = [code for code in wanted if code not in class_labels]
    if unknown_codes:
        raise ValidationFailed(f"The class labels have no {', '.join(unknown_codes)} labels.")
    found, unknown, without_file = _images_by_name([key for key, _ in labelled])
    if unknown:
        raise ValidationFailed(
            f"{len(unknown)} labelled images are not imported ({_shown(unknown)}): import them first."
        )
    if without_file:
        raise ValidationFailed(
            f"{len(without_file)} labelled images have no stored file ({_shown(without_file)})."
        )
    image_class = [[found[key], class_id] for key, class_id in labelled]
    labelled_classes = {class_id for _, class_id in labelled}
    problems = [
        f"{code}: none of its {len(class_labels[code])} classes has a labelled image"
        for code in wanted
        if not labelled_classes & set(class_labels[code])
    ]
    if problems:
        raise ValidationFailed("Cannot check zero-shot classification: " + "; ".join(problems) + ".")
    embedded = wanted + (
        [BASELINE_LANGUAGE] if BASELINE_LANGUAGE in class_labels and BASELINE_LANGUAGE not in wanted else []
    )
    texts = {}
    for code in embedded:
        forms = prompts.get(code) or [PLAIN_LABEL]
        texts[code] = [
            [class_id, form.replace("{}", label, 1)]
            for class_id, label in sorted(class_labels[code].items())
            for form in forms
        ]
    params = clip.params(prompt_prefix="")  # the templates are the prompts
    data = {
        "files": {"labels": labels[0], "images": images[0], "templates": templates[0] if templates else ""},
        "n_classes": {code: len(class_labels[code]) for code in embedded},
        "n_templates": {code: len(prompts.get(code) or [PLAIN_LABEL]) for code in embedded},
        "plain_label": sorted(code for code in embedded if not prompts.get(code)),
        "n_images": len(image_class),
        "baseline": BASELINE_LANGUAGE if BASELINE_LANGUAGE in class_labels else None,
    }
    return ProbePlan(
        probe=ClipProbe.ZEROSHOT,
        name=(name or f"{_model_label(params)} zero-shot on {labels[0] or 'imported labels'}")[:200],
        languages=wanted,
        params=params,
        data=data,
        images=image_class,
        texts=texts,
    )


def language_of_file(file_name: str) -> str:
    """The language a foil file is in, from its name: ``de.json``, ``de_counting.json``, ``pt-BR_x.json``."""
    found = _LANGUAGE_IN_NAME.match(PurePath(file_name).name)
    if not found:
        raise ValidationFailed(
            f"Cannot tell the language of “{file_name}”: name it <language code>.json or "
            "<language code>_<anything>.json, or give the language with it."
        )
    return found.group(1)


def foil_check_plan(
    *,
    files: list[tuple[str, bytes | str, str]],
    min_votes: int = DEFAULT_MIN_VOTES,
    skip_unknown_images: bool = False,
    languages: list[str] | None = None,
    name: str = "",
    clip: ClipModelChoice = CLIP_SETTINGS,
) -> ProbePlan:
    """Parse and check a foil import; stores nothing.

    ``files``: ``(file name, content, language)`` of VALSE-format files (language "" reads it from
    the file name, :func:`language_of_file`); a language may span several files (VALSE's pieces).
    Only pairs with ``mturk.caption >= min_votes`` are kept. ``clip``: the model (as for
    :func:`zeroshot_check_plan`), prompt prefix and image orientation. Raises NotFound for an unknown
    registered model; ValidationFailed for a model the workers would not know, a malformed
    file (naming its items), a pair whose image is not imported (unless ``skip_unknown_images``,
    which drops those pairs and counts them), the same pair twice, or a language with no valid pair.
    """
    if not files:
        raise ValidationFailed("Give at least one foil file (VALSE's JSON format).")
    if min_votes < 0:
        raise ValidationFailed("The minimum number of annotator votes must be 0 or more.")
    pairs: dict[str, list] = {}
    invalid: Counter = Counter()
    for file_name, content, code in files:
        code = (code or "").strip() or language_of_file(file_name)
        if not language_code_ok(code):
            raise ValidationFailed(f"“{code[:40]}” is not a language code (e.g. de, pt-BR).")
        # The piece (VALSE's file, e.g. "counting-hard") keys the pairs, the language's code left out,
        # so that en_counting.json and counting_de.json hold the same pairs.
        piece = "_".join(
            part for part in re.split(r"[_.]", PurePath(file_name).stem) if part and part != code
        )
        try:
            parsed = parse_foils(content, file_name, min_votes=min_votes, piece=piece)
        except ProbeFileError as exc:
            raise ValidationFailed(f"Cannot import: {exc}.") from None
        invalid[code] += parsed.invalid
        pairs.setdefault(code, []).extend(parsed.pairs)
    wanted = _wanted(languages) or sorted(pairs)
    if BASELINE_LANGUAGE in pairs and BASELINE_LANGUAGE not in wanted:
        wanted.append(BASELINE_LANGUAGE)  # the baseline every language is compared with
    missing = [code for code in wanted if code not in pairs]
    if missing:
        raise ValidationFailed(f"No foil file is in {', '.join(missing)}.")
    names = sorted({pair.image for code in wanted for pair in pairs[code]})
    found, unknown, without_file = _images_by_name(names)
    if without_file:
        raise ValidationFailed(
            f"{len(without_file)} foil images have no stored file ({_shown(without_file)})."
        )
    if unknown and not skip_unknown_images:
        raise ValidationFailed(
            f"{len(unknown)} foil images are not imported ({_shown(unknown)}): import them first, "
            "or skip the pairs of unknown images."
        )
    texts, skipped, problems = {}, {}, []
    for code in wanted:
        seen = Counter(pair.key for pair in pairs[code])
        twice = sorted(key for key, n in seen.items() if n > 1)
        if twice:
            problems.append(f"{code}: pairs listed twice ({_shown(twice)})")
        rows = [
            [pair.key, found[pair.image], pair.phenomenon, pair.caption, pair.foil]
            for pair in pairs[code]
            if pair.image in found
        ]
        skipped[code] = len(pairs[code]) - len(rows)
        if not rows:
            problems.append(f"{code}: no valid pair with an imported image")
        texts[code] = rows
    if problems:
        raise ValidationFailed("Cannot check foils: " + "; ".join(problems) + ".")
    params = clip.params()
    params["n_boot"] = int(settings.CLIP_FOIL_BOOTSTRAP)
    data = {
        "files": [file_name for file_name, _, _ in files],
        "rule": f"pairs with mturk.caption ≥ {min_votes} (of VALSE's 3 annotators)",
        "min_votes": min_votes,
        "n_pairs": {code: len(texts[code]) for code in wanted},
        "invalid": {code: invalid[code] for code in wanted},
        "skipped_unknown_images": {code: n for code, n in skipped.items() if n},
    }
    return ProbePlan(
        probe=ClipProbe.FOIL,
        name=(name or f"{_model_label(params)} foils on {', '.join(wanted)}")[:200],
        languages=wanted,
        params=params,
        data=data,
        images=[[image_id] for image_id in sorted({row[1] for rows in texts.values() for row in rows})],
        texts=texts,
    )


def probe_check_store(*, plan: ProbePlan, user=None, enqueue: bool = True) -> ClipProbeCheck:
    """Store a planned check and its chunks in one transaction; send them to the workers on commit.
    Raises :class:`JobsUnavailable` (after the check is stored and marked failed) when the broker is
    unreachable. In eager mode (tests, the embedded default) the check has run when this returns."""
    size = plan.params["chunk_size"]
    with transaction.atomic():
        check = ClipProbeCheck.objects.create(
            probe=plan.probe, data=plan.data, **planned_check_fields(plan, user)
        )
        rows = plan.images if plan.probe == ClipProbe.ZEROSHOT else [row[0] for row in plan.images]
        chunks = PROBE_CHUNKS.unsaved(
            check, images=rows, texts=plan.texts, size=size, languages=plan.languages
        )
        job_units_store(CLIP_PROBE_CHECK, job=check, units=chunks, enqueue=enqueue)
    return check


def probe_check_resume(*, check_id: int, enqueue: bool = True) -> ResumeResult:
    """Put every chunk that is not done and has no live worker back to pending and send those that
    may run (on commit). Idempotent; raises NotFound, and JobsUnavailable from the commit."""
    return job_resume(CLIP_PROBE_CHECK, job_id=check_id, enqueue=enqueue)


__all__ = [
    "ProbePlan",
    "foil_check_plan",
    "language_of_file",
    "probe_check_resume",
    "probe_check_store",
    "zeroshot_check_plan",
]

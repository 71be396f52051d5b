"""The demo's CLIP checks on its tiny random-weight model: a retrieval check on the demo's reference
sets, a zero-shot check on hand-written class names and a foil check on hand-written foils
(:mod:`evaluation.demo.clip_probe_data`), so the CLIP trust table and its figure have something to
show. Their numbers show the workflow; with random weights they are not results.
"""

from __future__ import annotations

from evaluation.clip_checks.plan import (
    foil_check_plan,
    probe_check_resume,
    probe_check_store,
    zeroshot_check_plan,
)
from evaluation.clip_choice import ClipModelChoice
from evaluation.finetune.plan import clip_model_demo_register
from evaluation.models import ClipProbeCheck, RetrievalCheck, RunStatus
from evaluation.retrieval.plan import retrieval_check_plan, retrieval_check_resume, retrieval_check_store

ZEROSHOT_NAME = "Demo zero-shot check (tiny random model, not results)"
FOIL_NAME = "Demo foil check (tiny random model, not results)"
RETRIEVAL_NAME = "Demo retrieval check (tiny random model, not results)"


def demo_clip_checks_load(*, reference_sets: list[str]) -> list[tuple[str, int, bool]]:
    """Create the demo's three checks on the tiny model (or resume one that did not finish), in the
    caller's transaction; they are sent to the workers when it commits. Idempotent by name. Returns
    ``(kind, check id, created)`` of each. Raises ValidationFailed when the demo's photos are missing."""
    from evaluation.demo.clip_probe_data import demo_foil_files, demo_zeroshot_files

    registered = clip_model_demo_register()
    clip = ClipModelChoice(registered=registered.name)  # as a manager chooses it in the admin
    out = []
    existing = RetrievalCheck.objects.filter(name=RETRIEVAL_NAME).order_by("pk").first()
    if existing is None:
        # The registered demo model, as a manager picks it (an internal architecture name is refused).
        plan = retrieval_check_plan(
            reference_sets=reference_sets, name=RETRIEVAL_NAME, clip_model_name=registered.name
        )
        out.append(("retrieval", retrieval_check_store(plan=plan).pk, True))
    else:
        if existing.status != RunStatus.SUCCEEDED:
            retrieval_check_resume(check_id=existing.pk)
        out.append(("retrieval", existing.pk, False))
    files = demo_zeroshot_files()
    planners = {
        ZEROSHOT_NAME: lambda: zeroshot_check_plan(
            labels=files["labels"],
            images=files["images"],
            templates=files["templates"],
            name=ZEROSHOT_NAME,
            clip=clip,
        ),
        FOIL_NAME: lambda: foil_check_plan(files=demo_foil_files(), name=FOIL_NAME, clip=clip),
    }
    for name, planner in planners.items():
        existing = ClipProbeCheck.objects.filter(name=name).order_by("pk").first()
        if existing is None:
            plan = planner()
            check = probe_check_store(plan=plan)
            out.append((plan.probe, check.pk, True))
        else:
            if existing.status != RunStatus.SUCCEEDED:
                probe_check_resume(check_id=existing.pk)
            out.append((existing.probe, existing.pk, False))
    return out

"""Import annotators from a CSV file: accounts, profiles and language skills, all or nothing.

Header (names in any order, case ignored): ``username``, ``email``, ``languages``
(``code:level`` pairs separated by ``;`` or spaces, e.g. ``de:native; en:fluent``) and
``reads_english`` (yes/no, true/false, 1/0; empty: yes). Every line passes the checks of the
one-annotator form (:func:`annotation.services.annotators.annotator_spec_check`); a username
twice in the file, or an account that exists and is not an annotator (staff above all), is a
problem. One problem anywhere and nothing is imported, with every problem named by line.

A line for an annotator who already exists with the same e-mail address is a re-run: unchanged,
or updated when it adds a language or changes a level or "reads English" (skills are never
removed here). Accounts are created as in the form: never staff, no usable password.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from annotation.importers.metadata_files import csv_records
from annotation.importers.report import ImportReport, Problems, header_records, input_file_check
from annotation.models import Language
from annotation.services.annotators import (
    AnnotatorSpec,
    annotator_save,
    annotator_spec_check,
    existing_user_check,
    skills_parse,
)
from core.errors import Conflict, ValidationFailed

REQUIRED_COLUMNS = ("username", "email", "languages")
OPTIONAL_COLUMNS = ("reads_english",)
YES = {"", "yes", "y", "true", "1"}
NO = {"no", "n", "false", "0"}


def _reads_english(value: str) -> bool:
    value = value.strip().lower()
    if value in YES:
        return True
    if value in NO:
        return False
    raise ValidationFailed(f"reads_english is yes or no, not “{value}”.")


def annotators_import(*, path: Path, dry_run: bool = False) -> ImportReport:
    """Import the annotators of a CSV file (see the module docstring); return the report.

    Validates every line before writing; writes in one transaction, locking the existing
    accounts it meets. Idempotent: a re-run reports every annotator unchanged. ``dry_run``
    reports the same counts and writes nothing. Raises ValidationFailed listing every problem
    by line (nothing is imported then), and Conflict when the same accounts are created
    concurrently. The keys of created annotators are in ``report.created_keys``.
    """
    path = input_file_check(path, what="annotators")
    report = ImportReport(subject="annotators", dry_run=dry_run)
    problems = Problems()
    records = csv_records(path, problems)
    first = next(records, None)
    if first is None:
        problems.add(path.name, "the file is empty.")
        problems.raise_if_any()
    header = [cell.strip().lower() for cell in first[1]]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        problems.add(f"{path.name} line {first[0]}", f"the header has no {', '.join(missing)} column.")
        problems.raise_if_any()
    ignored = [c for c in header if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
    if ignored:
        report.unknown_fields.append(f"{path.name}: {', '.join(ignored)}")

    rows: list[tuple[str, AnnotatorSpec]] = []
    for where, record in header_records(path, records, header, problems):
        try:
            spec = AnnotatorSpec(
                username=record["username"].strip(),
                email=record["email"].strip(),
                skills=skills_parse(record["languages"]),
                reads_english=_reads_english(record.get("reads_english", "")),
            )
        except ValidationFailed as exc:
            problems.add(where, exc.message)
            continue
        rows.append((where, spec))

    codes = {code for _, spec in rows for code, _ in spec.skills}
    languages = {lang.code: lang for lang in Language.objects.filter(code__in=codes)}
    seen: dict[str, str] = {}
    for where, spec in rows:
        try:
            annotator_spec_check(spec, languages=languages)
        except ValidationFailed as exc:
            problems.add(where, exc.message)
            continue
        if spec.username in seen:
            problems.add(where, f"“{spec.username}” is also on {seen[spec.username]}.")
        seen.setdefault(spec.username, where)
    # Every problem of the file in one report, parse and checks alike.
    if not rows and not problems:
        problems.add(path.name, "no annotator in the file.")
    problems.raise_if_any()

    try:
        with transaction.atomic():
            existing = {
                user.get_username(): user
                for user in get_user_model()
                # Lock the user rows only: PostgreSQL cannot lock the nullable side of the join
                # to the annotator profile (and SQLite ignores FOR UPDATE, which hid this).
                .objects.select_for_update(of=("self",))
                .filter(username__in=[spec.username for _, spec in rows])
                .select_related("annotator")
            }
            outcomes = {}
            for where, spec in rows:
                user = existing.get(spec.username)
                if user is not None:
                    try:
                        outcomes[spec.username] = existing_user_check(user, spec)
                    except ValidationFailed as exc:
                        problems.add(where, exc.message)
            problems.raise_if_any()
            for _, spec in rows:
                outcome = outcomes.get(spec.username, "created")
                if outcome == "unchanged":
                    report.unchanged += 1
                    continue
                annotator_save(spec=spec, languages=languages)
                if outcome == "created":
                    report.created += 1
                    report.created_keys.append(spec.username)
                else:
                    report.updated += 1
                    report.changed_keys.append(spec.username)
            if dry_run:
                transaction.set_rollback(True)
    except IntegrityError:
        raise Conflict(
            "The same annotators were being created by someone else at the same time; "
            "run the import again (it is idempotent)."
        ) from None
    return report

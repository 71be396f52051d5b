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
    annotator_spec_problems,
    existing_user_check,
    skills_parse_all,
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

    # Every problem of every line in one report: each cell is judged on its own, and accounts that
    # exist but are not annotators are looked up now too, not only after the rest is clean.
    parsed: list[tuple[str, AnnotatorSpec, list[str]]] = []
    for where, record in header_records(path, records, header, problems):
        skills, line_problems = skills_parse_all(record["languages"])
        try:
            reads_english = _reads_english(record.get("reads_english", ""))
        except ValidationFailed as exc:
            reads_english = True
            line_problems.append(exc.message)
        spec = AnnotatorSpec(
            username=record["username"].strip(),
            email=record["email"].strip(),
            skills=skills,
            reads_english=reads_english,
        )
        parsed.append((where, spec, line_problems))

    codes = {code for _, spec, _ in parsed for code, _ in spec.skills}
    languages = {lang.code: lang for lang in Language.objects.filter(code__in=codes)}
    accounts = {
        user.get_username(): user
        for user in get_user_model()
        .objects.filter(username__in=[spec.username for _, spec, _ in parsed])
        .select_related("annotator")
    }
    rows: list[tuple[str, AnnotatorSpec]] = []
    seen: dict[str, str] = {}
    for where, spec, line_problems in parsed:
        found = annotator_spec_problems(spec, languages=languages)
        if line_problems:  # the languages cell was unreadable: "no language" says nothing more
            found = [problem for problem in found if problem != "no language."]
        found = line_problems + found
        if spec.username in seen:
            found.append(f"“{spec.username}” is also on {seen[spec.username]}.")
        seen.setdefault(spec.username, where)
        if spec.username in accounts:
            try:
                existing_user_check(accounts[spec.username], spec)
            except ValidationFailed as exc:
                found.append(exc.message)
        for problem in found:
            problems.add(where, problem)
        if not found:
            rows.append((where, spec))
    if not parsed and not problems:
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

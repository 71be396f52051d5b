"""The files the zero-shot and foil checks import, parsed and checked (plain Python, no Django).

Every parser reads the whole file and raises :class:`ProbeFileError` naming the line (CSV) or the
item (JSON) of the first problems; nothing is returned for a file with any problem.

* Class labels, Babel-ImageNet's JSON: ``{"de": [[class index, ...], ["label", ...]], ...}``: per
  language, the ImageNet class indices it covers and their labels, in the same order. Or a CSV
  with the header ``class_id,language,label``, one label per class and language.
* Prompt templates, CSV ``language,template``: each template holds ``{}`` once, where the label
  goes. A language without templates uses the plain label.
* Labelled images, CSV ``image,class_id``: an imported image's key (or its file name) and its class.
* Foils, VALSE's JSON: ``{"id": {"caption", "foil", "linguistic_phenomena", "image_file",
  "mturk": {"caption": votes, ...}}, ...}``; a pair is kept when ``mturk.caption >= min_votes``
  (VALSE's validity rule: at least 2 of 3 annotators judged the caption, not the foil, to describe
  the image). A translated set has the same format, one file per language.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_MIN_VOTES",
    "FoilPair",
    "FoilSet",
    "ProbeFileError",
    "parse_class_labels",
    "parse_foils",
    "parse_labelled_images",
    "parse_templates",
]

DEFAULT_MIN_VOTES = 2
PROBLEMS_SHOWN = 5
# A BCP 47-like code ("de", "pt-BR", "zh-Hant"): what the checks and the pages accept as a language.
LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")


def language_code_ok(code: str) -> bool:
    return bool(LANGUAGE_CODE.fullmatch(code))


class ProbeFileError(ValueError):
    """A file that cannot be imported; the message names its lines or items."""


def _raise(name: str, problems: list[str]) -> None:
    if problems:
        more = f" (and {len(problems) - PROBLEMS_SHOWN} more)" if len(problems) > PROBLEMS_SHOWN else ""
        raise ProbeFileError(f"{name}: " + "; ".join(problems[:PROBLEMS_SHOWN]) + more)


def _text(data: bytes | str, name: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ProbeFileError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def _csv_rows(data: bytes | str, name: str, header: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(_text(data, name), newline=""))
    found = tuple((h or "").strip() for h in reader.fieldnames or ())
    if found[: len(header)] != header:
        raise ProbeFileError(
            f"{name}: line 1 must be the header {','.join(header)}, not {','.join(found) or 'empty'}"
        )
    rows = []
    for row in reader:
        if None in row or any(row.get(h) is None for h in header):
            raise ProbeFileError(
                f"{name}: line {reader.line_num} has {len(row) - (None in row)} columns, not {len(header)}"
            )
        rows.append((reader.line_num, {h: (row[h] or "").strip() for h in header}))
    if not rows:
        raise ProbeFileError(f"{name}: no rows after the header")
    return rows


def _class_id(value, where: str, problems: list[str]) -> int | None:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        problems.append(f"{where}: the class id must be a whole number ≥ 0, not “{value}”")
        return None
    return int(text)


def parse_class_labels(data: bytes | str, name: str = "class labels") -> dict[str, dict[int, str]]:
    """Language -> class id -> label, from Babel-ImageNet's JSON or a ``class_id,language,label`` CSV."""
    text = _text(data, name)
    problems: list[str] = []
    out: dict[str, dict[int, str]] = {}
    if text.lstrip().startswith("{"):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProbeFileError(f"{name}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
        for code, entry in loaded.items():
            code = str(code).strip()
            if not language_code_ok(code):
                problems.append(f"“{code[:40]}” is not a language code (e.g. de, pt-BR)")
                continue
            if (
                not isinstance(entry, list)
                or len(entry) != 2
                or not all(isinstance(part, list) for part in entry)
                or len(entry[0]) != len(entry[1])
            ):
                problems.append(f"“{code}” must be [[class indices], [labels]] of the same length")
                continue
            labels: dict[int, str] = {}
            for index, label in zip(entry[0], entry[1], strict=True):
                class_id = _class_id(index, f"“{code}”", problems)
                if not isinstance(label, str) or not label.strip():
                    problems.append(f"“{code}”: class {index} has an empty label")
                elif class_id is not None and class_id in labels:
                    problems.append(f"“{code}”: class {class_id} is listed twice")
                elif class_id is not None:
                    labels[class_id] = label.strip()
            if not labels and not problems:
                problems.append(f"“{code}” has no classes")
            out[code] = labels
        if not loaded:
            problems.append("no language")
    else:
        for line, row in _csv_rows(text, name, ("class_id", "language", "label")):
            class_id = _class_id(row["class_id"], f"line {line}", problems)
            code, label = row["language"], row["label"]
            if not code or not label:
                problems.append(f"line {line}: the language and the label must not be empty")
            elif not language_code_ok(code):
                problems.append(f"line {line}: “{code[:40]}” is not a language code (e.g. de, pt-BR)")
            elif class_id is not None and class_id in out.get(code, {}):
                problems.append(f"line {line}: class {class_id} already has a {code} label")
            elif class_id is not None:
                out.setdefault(code, {})[class_id] = label
    _raise(name, problems)
    return out


def parse_templates(data: bytes | str, name: str = "prompt templates") -> dict[str, list[str]]:
    """Language -> its prompt templates (each with one ``{}``), from a ``language,template`` CSV."""
    problems: list[str] = []
    out: dict[str, list[str]] = {}
    for line, row in _csv_rows(data, name, ("language", "template")):
        code, template = row["language"], row["template"]
        if not language_code_ok(code):
            problems.append(f"line {line}: “{code[:40]}” is not a language code (e.g. de, pt-BR)")
        elif template.count("{}") != 1 or set("{}") & set(template.replace("{}", "", 1)):
            problems.append(f"line {line}: the template must hold “{{}}” exactly once (where the label goes)")
        elif template in out.get(code, []):
            problems.append(f"line {line}: the {code} template is listed twice")
        else:
            out.setdefault(code, []).append(template)
    _raise(name, problems)
    return out


def parse_labelled_images(data: bytes | str, name: str = "labelled images") -> list[tuple[str, int]]:
    """``[(image key or file name, class id)]`` from an ``image,class_id`` CSV; an image once."""
    problems: list[str] = []
    out: dict[str, int] = {}
    for line, row in _csv_rows(data, name, ("image", "class_id")):
        class_id = _class_id(row["class_id"], f"line {line}", problems)
        if not row["image"]:
            problems.append(f"line {line}: the image is empty")
        elif row["image"] in out:
            problems.append(f"line {line}: image “{row['image']}” is listed twice")
        elif class_id is not None:
            out[row["image"]] = class_id
    _raise(name, problems)
    return list(out.items())


@dataclass(frozen=True)
class FoilPair:
    key: str
    image: str
    phenomenon: str
    caption: str
    foil: str


@dataclass
class FoilSet:
    pairs: list[FoilPair] = field(default_factory=list)
    invalid: int = 0  # pairs VALSE's annotators did not validate (mturk.caption below the rule)


def parse_foils(
    data: bytes | str, name: str = "foils", *, min_votes: int = DEFAULT_MIN_VOTES, piece: str = ""
) -> FoilSet:
    """The valid pairs of a VALSE file. ``piece`` prefixes each pair key (VALSE's ids repeat across
    its files); the phenomenon is ``linguistic_phenomena``."""
    text = _text(data, name)
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProbeFileError(f"{name}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(loaded, dict) or not loaded:
        raise ProbeFileError(
            f"{name}: must be a JSON object of pairs by id (VALSE's format), with at least one"
        )
    problems: list[str] = []
    out = FoilSet()
    for key, item in loaded.items():
        if not isinstance(item, dict):
            problems.append(f"item “{key}” is not an object")
            continue
        missing = [
            k
            for k in ("caption", "foil", "linguistic_phenomena", "image_file")
            if not str(item.get(k) or "").strip()
        ]
        votes = (item.get("mturk") or {}).get("caption") if isinstance(item.get("mturk"), dict) else None
        if missing:
            problems.append(f"item “{key}” lacks {', '.join(missing)}")
        elif isinstance(votes, bool) or not isinstance(votes, int):
            problems.append(f"item “{key}” lacks the mturk caption votes (a whole number)")
        elif votes < min_votes:
            out.invalid += 1
        else:
            out.pairs.append(
                FoilPair(
                    key=f"{piece}:{key}" if piece else str(key),
                    image=str(item["image_file"]).strip(),
                    phenomenon=str(item["linguistic_phenomena"]).strip(),
                    caption=str(item["caption"]).strip(),
                    foil=str(item["foil"]).strip(),
                )
            )
    _raise(name, problems)
    return out

"""What can be exported: each kind's formats, the campaign kinds it applies to, its file type, the
tables behind it and the notes its provenance carries."""

from __future__ import annotations

from annotation.models import CampaignKind

from . import rows

# Export kind -> its formats (the first is the default).
FORMATS: dict[str, tuple[str, ...]] = {
    "captions": ("xm3600", "coco"),
    "system-captions": ("coco-results",),
    "ratings": ("csv", "jsonl"),
    "judgments": ("csv", "jsonl"),
    "work-time": ("csv", "jsonl"),
    "hours": ("csv", "jsonl"),
    "controls": ("csv", "jsonl"),
}
# Export kind -> the campaign kinds it applies to.
CAMPAIGN_KINDS: dict[str, tuple[str, ...]] = {
    "captions": (CampaignKind.CAPTION,),
    "ratings": (CampaignKind.CAPTION, CampaignKind.RATING),
    "judgments": (CampaignKind.SIDE_BY_SIDE,),
    "work-time": tuple(CampaignKind.values),
    "hours": tuple(CampaignKind.values),
    "controls": tuple(CampaignKind.values),
}
# Table exports: kind -> (columns, rows of a campaign).
TABLES = {
    "ratings": (rows.RATING_COLUMNS, rows.ratings),
    "judgments": (rows.JUDGMENT_COLUMNS, rows.judgments),
    "work-time": (rows.WORK_TIME_COLUMNS, rows.work_time),
    "hours": (rows.HOURS_COLUMNS, rows.hours),
    "controls": (rows.CONTROL_COLUMNS, rows.controls),
}
# Format -> (file name ending, content type).
FILE_TYPES: dict[str, tuple[str, str]] = {
    "xm3600": (".xm3600.jsonl", "application/jsonl; charset=utf-8"),
    "coco": (".coco.json", "application/json; charset=utf-8"),
    "coco-results": (".coco-results.json", "application/json; charset=utf-8"),
    "csv": (".csv", "text/csv; charset=utf-8; header=present"),
    "jsonl": (".jsonl", "application/jsonl; charset=utf-8"),
}

COUNT_NAMES = {
    ("captions", "xm3600"): ("images", "captions"),
    ("captions", "coco"): ("images", "annotations"),
}

SUBMITTED_ONLY = "Only submitted work: assignments submitted on time or late; open batches can still change."
PSEUDONYMS = (
    "annotator (and caption_author) is the annotator's stable pseudonym; user names are in "
    "*_username columns only when they were asked for."
)
NOTES: dict[tuple[str, str], list[str]] = {
    ("captions", "xm3600"): [
        "One JSON object per line and image, sorted by image key; captions in the order they were submitted.",
        "caption: the submitted captions as written. caption/tokenized/lowercase: the tokens the metrics "
        "see (the language's tokenisation scheme, lowercased, punctuation removed) joined by single spaces. "
        "caption/tokenized: the same scheme without lowercasing. tokenization (in this record) gives the "
        "scheme, its version, case and punctuation rule of each field.",
        "image/locale: the image's country where it is known, else empty.",
    ],
    ("captions", "coco"): [
        "images[].id and annotations[].image_id: the image key, as an integer when the key is a decimal "
        "number; annotations[].id: the caption's id in the platform.",
    ],
    ("system-captions", "coco-results"): [
        "image_id: the image key, as an integer when the key is a decimal number (the same rule as the "
        "COCO annotations export, so the two files match).",
    ],
    ("ratings", "csv"): [SUBMITTED_ONLY, PSEUDONYMS],
    ("judgments", "csv"): [
        SUBMITTED_ONLY,
        PSEUDONYMS,
        "choice: the point as the annotator saw it (a code); choice_as_seen: its label on the screen "
        "(e.g. “Right much better”); choice_label: the paper's label of that point, read from the LEFT "
        "caption's side (MUCH-BETTER = left much better … MUCH-WORSE = right much better). "
        "m2_side: the side the test system m2 was shown on. score: from m2's side, -3..+3 (+3: m2 much "
        "better). left_system / right_system: the systems whose captions were shown on each side.",
        "Control items (is_control) never enter ΔS×S; identical pairs are reported apart.",
    ],
}
NOTES[("work-time", "csv")] = [
    SUBMITTED_ONLY,
    PSEUDONYMS,
    "One row per image of a submitted batch, control items included (is_control). item_rating_seconds: "
    "seconds the item was the current one on screen 1, the verification or the side-by-side screen; "
    "item_writing_seconds: on screen 2. batch_screen_seconds: the batch's screens as the page measured "
    "them; batch_wall_seconds: from the batch being handed out to its submit (breaks included). "
    "typing_flags / typing_review: a written caption's typing flags from the page's record (pasted, fast, "
    "untyped, unmeasured) and from the server's draft saves (drafts_none, drafts_whole, drafts_fast) "
    "and the manager's decision (pending, kept, excluded); empty when not flagged.",
]
NOTES[("hours", "csv")] = [
    SUBMITTED_ONLY,
    PSEUDONYMS,
    "One row per annotator: submitted batches, their images and control items; screen_hours: the "
    "batches' screens as the pages measured them (unmeasured_batches: batches whose page could not); "
    "wall_hours: from hand-out to submit, breaks included (an upper bound).",
]
NOTES[("controls", "csv")] = [
    SUBMITTED_ONLY,
    PSEUDONYMS,
    "One row per annotator with submitted control items, lowest pass rate first. too_few: fewer "
    "control results than the campaign's minimum, not judged; flagged: judged and below threshold. "
    "Control items never enter the other exports' numbers (ratings leave them out; judgments mark them).",
]
NOTES[("controls", "jsonl")] = NOTES[("controls", "csv")]
NOTES[("work-time", "jsonl")] = NOTES[("work-time", "csv")]
NOTES[("hours", "jsonl")] = NOTES[("hours", "csv")]
NOTES[("ratings", "jsonl")] = NOTES[("ratings", "csv")]
NOTES[("judgments", "jsonl")] = NOTES[("judgments", "csv")]
TABLE_NOTES = {
    "csv": "RFC 4180 (UTF-8 without BOM, CRLF, header row); string cells starting with = + - @ tab CR or "
    "NUL are prefixed with a single quote so spreadsheets do not run them; numbers are plain numbers.",
    "jsonl": "JSON lines: one object per record, no header line; null for missing values.",
}

"""What a caption file's entry means, whatever the format: :class:`Record`, and :class:`ShapeError` for an
entry that has none of the shapes its format allows (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from core.caption_files.messages import Message, Text, gettext_noop, plain

__all__ = [
    "CANDIDATES",
    "ID_FIELDS",
    "REFERENCES",
    "Entry",
    "Record",
    "ShapeError",
    "gettext_noop",
    "image_id",
]

CANDIDATES = "candidates"  # one caption per image and language: a submission, a system's outputs
REFERENCES = "references"  # several captions per image: a dataset's human captions
ID_FIELDS = ("image_id", "image/key")


class ShapeError(ValueError):
    """An entry or line of a shape its format does not allow; ``message`` says why in English, ``text``
    as a translatable :class:`~core.caption_files.messages.Message`. The reader that caught it adds the
    position, unless a whole-file parser gives it: ``entry`` (0-based index in the file's list) or
    ``line`` (1-based)."""

    def __init__(self, message: Text, *, entry: int | None = None, line: int | None = None):
        self.text = message if isinstance(message, Message) else plain(message)
        self.message = str(message)
        super().__init__(self.message)
        self.entry = entry
        self.line = line


@dataclass(frozen=True)
class Record:
    """One entry's captions of one image in one language, as the file gives them.

    ``image``: the id as in the file (``int`` or non-empty ``str``); ``id_field``: which field held it;
    ``language``: ``None`` where the entry carries none (a COCO results entry, a flat line without one);
    ``captions``: the values as in the file (strings where the file is right; the consumer checks them);
    ``shape``: ``"coco"``, ``"flat"`` or ``"xm3600"``."""

    where: Text
    image: int | str
    id_field: str
    language: str | None
    captions: tuple[object, ...]
    shape: str

    @property
    def key(self) -> str:
        """The image id as an image key: a COCO integer written as a number, a string stripped."""
        return str(self.image).strip()


@dataclass(frozen=True)
class Entry:
    """One entry (a COCO list element, a JSON line): its image, its records (one per language it holds;
    none where a line holds no caption in the language asked for) and the fields the format does not
    define (``unknown``: a consumer refuses them, reports them or ignores them)."""

    where: Text
    image: int | str
    id_field: str
    shape: str
    records: tuple[Record, ...]
    unknown: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return str(self.image).strip()


_KINDS = {dict: gettext_noop("an object"), list: gettext_noop("an array"), str: gettext_noop("a string")}


def kind(value: object) -> Message:
    """What a JSON value is, for a message: "an object", "an array", "a string" or its type's name."""
    name = _KINDS.get(type(value))
    return Message(name) if name else plain(type(value).__name__)


def image_id(obj: dict, *, missing: Text) -> tuple[str, int | str]:
    """(field, id) of an entry with exactly one of ``image_id`` and ``image/key``, an integer or a
    non-empty string; ShapeError otherwise (``missing``: the message where it has neither)."""
    fields = [name for name in ID_FIELDS if name in obj]
    if not fields:
        raise ShapeError(missing)
    if len(fields) > 1:
        raise ShapeError(Message(gettext_noop("both 'image_id' and 'image/key': give one")))
    value = obj[fields[0]]
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.strip())):
        raise ShapeError(
            Message(
                gettext_noop("%(field)s must be an integer or a non-empty string, got %(value)s"),
                field=fields[0],
                value=_shown(value),
            )
        )
    return fields[0], value


def _shown(value: object) -> str:
    text = repr(value) if not isinstance(value, dict | list) else kind(value)
    return text if len(text) <= 40 else text[:39] + "…"

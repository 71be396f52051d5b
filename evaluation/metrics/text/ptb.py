"""The COCO evaluation server's PTB tokenisation, in pure Python.

pycocoevalcap 1.2 tokenises captions with Stanford CoreNLP 3.4.1's ``PTBTokenizer`` (run as
``java ... PTBTokenizer -preserveLines -lowerCase`` on a file holding one caption per line) and then
drops the tokens in its punctuation list. :func:`tokenize` gives the same tokens without Java.

How it works. The Java tokenizer is a JFlex scanner: at each position it takes the longest match of
any of its ~80 rules (trailing context counted in the length), ties going to the earlier rule, then
runs that rule's action (rewrite the text, push characters back, or skip them). This module restates
the rules of release 3.4.1 (``PTBLexer.flex`` at tag v3.4.1, the options the command line sets:
``tokenizeNLs`` and otherwise the defaults) as Python regular expressions and runs the same
longest-match loop. Facts of that version worth knowing:

- Clitics: ``can't -> ca n't``, ``don't -> do n't``, ``it's -> it 's``, ``we'll -> we 'll``,
  ``dogs' -> dogs '`` (the lone quote is punctuation, dropped). ``cannot -> can not``,
  ``gonna -> gon na`` (also gotta, lemme, gimme, wanna), ``'tis -> 't is``, ``'twas -> 't was``.
- Quotes become LaTeX quotes (`` and ''), brackets -LRB- -RRB- -LCB- -RCB- -LSB- -RSB-. pycocoevalcap
  drops -LRB- -RRB- -LCB- -RCB- from its list, but it compares AFTER the jar's ``-lowerCase``, so with
  lowercasing ``-lrb-`` ``-rrb-`` ``-lcb-`` ``-rcb-`` ``-lsb-`` ``-rsb-`` all survive as tokens (as the
  server does); without lowercasing only -LSB- and -RSB- survive. ``„`` (U+201E), ``‟`` and ``‚`` are
  not rewritten and survive.
- ``...``, ``. . .`` and ``…`` become ``...`` (dropped); 3-4 hyphens and en/em dashes become ``--``
  (dropped); ``&amp;`` becomes ``&``; ``&nbsp;`` is a space.
- Slashes and asterisks are NOT escaped in 3.4.1 (``escapeForwardSlashAsterisk`` defaults to false);
  ``americanize`` is off (``colour`` stays ``colour``).
- Currency: ``£ -> #``, ``¢ -> cents``, ``€ ¤ ₠ -> $``; ``¥`` stays. ``½ ¼ ¾ ⅓ ⅔ -> 1/2 1/4 3/4
  1/3 2/3``; ``1 1/2`` is ONE token whose space becomes a no-break space (so are spaced phone numbers).
- Abbreviations keep their dot (``Mr.``, ``U.S.``, ``e.g.``, ``etc.``); one that ends a sentence
  also yields a separate ``.`` (dropped). A single letter with a dot before a sentence-starting word
  (``vitamin C. The ...``) loses its dot.
- Characters the grammar does not know are deleted ("untokenizable"), which splits a word around
  them: all characters outside the Basic Multilingual Plane (emoji, as Java sees two surrogates),
  characters assigned after Unicode 6.2, control characters, and the combining marks of some
  scripts (Kannada, Gurmukhi, some of Telugu and Malayalam: docs/metrics.md, "COCO PTB tokenisation", has
  the per-script measurement). Zero-width space, BOM, LRM/RLM, DEL and NUL are ignored.
- Lowercasing is done after tokenising, on the tokens, as Java's ``toLowerCase(Locale.ENGLISH)``.

Captions and lines. pycocoevalcap replaces ``\\n`` in a caption by a space and joins the captions
with ``\\n``. A few rules look past the end of a line, so a caption's tokens can depend on the caption
after it and on being the last one. :func:`tokenize_many` reproduces one pycocoevalcap call on a list,
including that. :func:`tokenize` gives a caption's tokens as they come out in the middle of such a
call. They differ only for (1) a caption ending in a single letter with a dot (``vitamin C.``) when
the next caption starts with one of the lexer's sentence starters (The, A, He, It, ...): the dot is
then split off, or in ``fig.``/``no.``/``ca.`` ... when the next one starts with a digit: the dot is
kept; (2) the LAST caption of a call, where there is no line break to look at: a final smiley loses
its eyes (``:)`` gives ``-rrb-``, not ``:-rrb-``), a final ``'90`` gives ``90``, and the like.

Speed. A whole file is tokenised in one go: :func:`tokenize_many_ids` cuts it at its spaces with
numpy (:mod:`.chunks`: the chunks are numbered from the file's bytes, and only the distinct ones, a
few hundred to a few tens of thousands in a caption file, become Python strings), tokenises each
distinct chunk once (a cache), and expands the file to integer token ids with numpy, so that a
50,000-image evaluation builds neither 3M chunk strings nor 300,000 token lists; :func:`tokenize_many`
turns those ids back into token lists. The lines where a rule crosses a space are found from the
distinct chunks too (few can start or end such a match) and tokenised whole.

Known exceptions (the reference itself misbehaves, so there is nothing to reproduce):
- Carriage return, vertical tab, form feed, U+0085, U+2028, U+2029 inside a caption are line breaks
  for the Java lexer: pycocoevalcap then reads one caption's tokens as the next caption's and every
  later caption is shifted. Here they are treated as spaces.
"""

from __future__ import annotations

import gc
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import chain

import numpy as np

from .chunks import PADDING as _PADDING
from .chunks import Chunks, split_chunks

__all__ = [
    "PUNCTUATIONS",
    "VERSION",
    "clear_cache",
    "ptb_tokens",
    "tokenize",
    "tokenize_many",
    "tokenize_many_ids",
]

#: The CoreNLP release whose PTBTokenizer this reproduces, and this module's revision.
VERSION = "corenlp-3.4.1/1"

#: pycocoevalcap 1.2's ``PUNCTUATIONS``: tokens dropped after tokenising.
PUNCTUATIONS = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"]
)


# --------------------------------------------------------------------------------------------------
# Character classes. JFlex's [:letter:] and [:digit:] are Java's Character.isLetter / isDigit over the
# Basic Multilingual Plane as of the JDK the grammar was compiled with; supplementary characters reach
# the scanner as surrogates, which belong to no class.


def _ranges(codepoints: Iterable[int]) -> str:
    """A character-class body (no brackets) for sorted code points."""
    parts: list[str] = []
    points = sorted(codepoints)
    if not points:
        return ""
    start = prev = points[0]
    for cp in [*points[1:], -2]:
        if cp == prev + 1:
            prev = cp
            continue
        parts.append(f"\\u{start:04X}" if start == prev else f"\\u{start:04X}-\\u{prev:04X}")
        start = prev = cp
    return "".join(parts)


def _bmp(predicate) -> list[int]:
    return [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF and predicate(chr(cp))]


# Letters and digits of Python's Unicode database that the 3.4.1 scanner does not know: characters
# assigned after the Unicode version its tables were built from (6.2). Measured, not guessed: every BMP
# character was run through the jar in three contexts ("x?x", "?", "A?") and compared with this module.
_UNKNOWN_TO_341 = (
    "037F 0528-052F 0560 0588 05EF 0860-086A 0870-0887 0889-088E 08A1 08AD-08C9 0978 0980 09FC 0AF9 0C34 "
    "0C5A 0C5D 0C80 0CDD 0D04 0D54-0D56 0D5F 0DE6-0DEF 0E86 0E89 0E8C 0E8E-0E93 0E98 0EA0 0EA8-0EA9 0EAC "
    "13F5 13F8-13FD 16F1-16F8 170D 171F 1878 191D-191E 19B0-19C0 19C8-19C9 1B4C 1C80-1C88 1C90-1CBA "
    "1CBD-1CBF 1CF2-1CF3 1CFA 2C2F 2C5F 312E-312F 31BB-31BF 4DB6-4DBF 9FCD-9FFF A698-A69D A78F A794-A79F "
    "A7AB-A7CA A7D0-A7D1 A7D3 A7D5-A7D9 A7F2-A7F7 A8FD-A8FE A9E0-A9E4 A9E6-A9FE AA7E-AA7F AB30-AB5A "
    "AB5C-AB69 AB70-ABBF"
)
# ... and two Mongolian letters that later Unicode versions made combining marks.
_LETTERS_THEN = frozenset({0x1885, 0x1886})


def _parse_ranges(text: str) -> frozenset[int]:
    points: set[int] = set()
    for part in text.split():
        low, _, high = part.partition("-")
        points.update(range(int(low, 16), int(high or low, 16) + 1))
    return frozenset(points)


_UNKNOWN = _parse_ranges(_UNKNOWN_TO_341)


def _known(category: frozenset[str]):
    return lambda char: unicodedata.category(char) in category and ord(char) not in _UNKNOWN


_LETTER_CLASS = _ranges(  # [:letter:]
    sorted(set(_bmp(_known(frozenset({"Lu", "Ll", "Lt", "Lm", "Lo"})))) | _LETTERS_THEN)
)
_DIGIT_CLASS = _ranges(_bmp(_known(frozenset({"Nd"}))))  # [:digit:]
_UPPER_CLASS = _ranges(_bmp(_known(frozenset({"Lu"}))))  # [:uppercase:]

# The grammar's additions to [:letter:] (combining marks and signs of several scripts, soft hyphen).
_LETTER_EXTRA = (
    "\u00ad\u0237-\u024f\u02c2-\u02c5\u02d2-\u02df\u02e5-\u02ff\u0300-\u036f\u0370-\u037d\u0384\u0385"
    "\u03cf\u03f6\u03fc-\u03ff\u0483-\u0487\u04cf\u04f6-\u04ff\u0510-\u0525\u055a-\u055f\u0591-\u05bd"
    "\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0615-\u061a\u063b-\u063f\u064b-\u065e\u0670\u06d6-\u06ef"
    "\u06fa-\u06ff\u070f\u0711\u0730-\u074f\u0750-\u077f\u07a6-\u07b1\u07ca-\u07f5\u07fa\u0900-\u0903"
    "\u093c\u093e-\u094e\u0951-\u0955\u0962-\u0963\u0981-\u0983\u09bc-\u09c4\u09c7\u09c8\u09cb-\u09cd"
    "\u09d7\u09e2\u09e3\u0a01-\u0a03\u0a3c\u0a3e-\u0a4f\u0a81-\u0a83\u0abc-\u0acf\u0b82\u0bbe-\u0bc2"
    "\u0bc6-\u0bc8\u0bca-\u0bcd\u0c01-\u0c03\u0c3e-\u0c56\u0d3e-\u0d44\u0d46-\u0d48\u0e30-\u0e3a"
    "\u0e47-\u0e4e\u0eb1-\u0ebc\u0ec8-\u0ecd"
)
_MISC_SYMBOL = (
    "+%&~^|\\\\\u00a6\u00a7\u00a8\u00a9\u00ac\u00ae\u00af\u00b0-\u00ba\u00d7\u00f7\u0387\u05be\u05c0"
    "\u05c3\u05c6\u05f3\u05f4\u0600-\u0603\u0606-\u060a\u060c\u0614\u061b\u061e\u066a\u066d"
    "\u0703-\u070d\u07f6-\u07f8\u0964\u0965\u0e4f\u1fbd\u2016\u2017\u2020-\u2023\u2030-\u2038\u203b"
    "\u203e-\u2042\u2044\u207a-\u207f\u208a-\u208e\u2100-\u214f\u2190-\u21ff\u2200-\u2bff\u3012\u30fb"
    "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
)


def _ci(word: str) -> str:
    """A literal matched without regard to ASCII case (JFlex %caseless; classes stay as written)."""
    return f"(?ai:{re.escape(word)})"


def _alt(*parts: str) -> str:
    return "(?:" + "|".join(parts) + ")"


def _words(*words: str) -> str:
    return _alt(*(_ci(word) for word in words))


# Macros of the grammar, as Python regular expressions. Alternations are ordered so that Python's
# first-match choice is the longest match, which is what JFlex takes.
SPACE = "[ \\t\u00a0\u2000-\u200a\u3000]"
NEWLINE = "(?:\\r\\n|[\\r\\n\u2028\u2029\u000b\u000c\u0085])"
SPACENL = f"(?:{SPACE}|{NEWLINE})"
SPACENLS = f"{SPACENL}+"
_SGML_NAME = "[A-Za-z][A-Za-z0-9_:.\\-]*"
SGML = (
    "<(?:[!?][A-Za-z\\-][^>\\r\\n]*"
    f"|{_SGML_NAME}(?:[ ]+(?:{_SGML_NAME}[ ]*=[ ]*(?:'[^']*'|\"[^\"]*\")|{_SGML_NAME}))*[ ]*/?"
    f"|/{_SGML_NAME})[ ]*>"
)
SPMDASH = f"(?:&{_words('MD', 'mdash', 'ndash')};|[\u0096\u0097\u2013\u2014\u2015])"
SPAMP = _ci("&amp;")
SPPUNC = f"&(?:{_words('HT', 'TL', 'UR', 'LR', 'QC', 'QL', 'QR', 'odq', 'cdq')}|#[0-9]+);"
SPLET = f"&[aeiouAEIOU]{_words('acute', 'grave', 'uml')};"
DIGIT = f"[{_DIGIT_CLASS}\u07c0-\u07c9]"
LETTER = f"(?:[{_LETTER_CLASS}{_LETTER_EXTRA}]|{SPLET})"
PLAIN_LETTER = f"[{_LETTER_CLASS}]"  # [:letter:]
PLAIN_DIGIT = f"[{_DIGIT_CLASS}]"  # [:digit:]
DATE = f"{DIGIT}{{1,2}}[\\-/]{DIGIT}{{1,2}}[\\-/]{DIGIT}{{2,4}}"
NUM = f"(?:{DIGIT}*(?:[.:,\u00ad\u066b\u066c]{DIGIT}+)+|{DIGIT}+)"
NUMBER = f"[\\-+]?{NUM}"
SUBSUPNUM = "[\u207a\u207b\u208a\u208b]?(?:[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+|[\u2080-\u2089]+)"
FRAC = f"(?:{DIGIT}{{1,4}}[\\- \u00a0])?{DIGIT}{{1,4}}(?:\\\\?/|\u2044){DIGIT}{{1,4}}"
FRAC2 = "[\u00bc\u00bd\u00be\u2153-\u215e]"
DOLSIGN = "(?:[A-Z]*\\$|#)"
DOLSIGN2 = "[\u00a2\u00a3\u00a4\u00a5\u0080\u20a0\u20ac\u060b\u0e3f\u20a4\uffe0\uffe1\uffe5\uffe6]"
_LD = f"(?:{LETTER}|{DIGIT})"
WORD = f"{LETTER}{_LD}*(?:[.!?]{LETTER}{_LD}*)*"
FILENAME_EXT = _words(
    *[
        "bat",
        "bmp",
        "class",
        "cgi",
        "cpp",
        "c",
        "dll",
        "docx",
        "doc",
        "exe",
        "gif",
        "gz",
        "htm",
        "html",
        "h",
        "jar",
        "java",
        "jpeg",
        "jpg",
        "mov",
        "mp3",
        "pdf",
        "php",
        "pl",
        "png",
        "ppt",
        "ps",
        "py",
        "sql",
        "tar",
        "txt",
        "wav",
        "xml",
        "x",
        "zip",
    ]
)
FILENAME = f"{_LD}+(?:[.]{_LD}+)*(?:[.]{FILENAME_EXT})"
APOS = f"(?:['\u0092\u2019]|{_ci('&apos;')})"
APOSETCETERA = f"(?:{APOS}|[`\u0091\u2018\u201b])"
_PLD = f"[{_LETTER_CLASS}{_DIGIT_CLASS}]"  # [:letter:]|[:digit:]
HYPHEN = "[\\-_\u058a\u2010\u2011]"
_THING_PART = f"(?:[dDoOlL]{APOSETCETERA}{_PLD})?{_PLD}+"
THING = f"{_THING_PART}(?:{HYPHEN}{_THING_PART})*"
THINGA = f"[A-Z]+(?:(?:[+&]|{SPAMP})[A-Z]+)+"
THING3 = "[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}(?:\\\\?/[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}){1,2}"
ACRO = (
    f"(?:{_words('Canada', 'Sino', 'Korean', 'EU', 'Japan', 'non')}-{_ci('U.S')}"
    f"|{_ci('U.S.-')}(?:{_ci('U.S.S.R')}|{_ci('U.K')})|[A-Za-z](?:\\.[A-Za-z])*)"
)
ACRO2 = (
    f"(?:{_words('Canada', 'Sino', 'Korean', 'EU', 'Japan', 'non')}-{_ci('U.S')}"
    f"|{_ci('U.S.-')}(?:{_ci('U.S.S.R')}|{_ci('U.K')})|[A-Za-z](?:\\.[A-Za-z])+)"
)
HTHING = f"[A-Za-z0-9][A-Za-z0-9.,\u00ad]*(?:-(?:{ACRO2}\\.|[A-Za-z0-9\u00ad]+))+"
REDAUX = f"{APOS}(?:{_words('re', 've', 'll')}|[msdMSD])"
SWORD = "[A-Za-z\u00ad]*[A-MO-Za-mo-z]\u00ad*"
SREDAUX = f"{_ci('n')}{APOSETCETERA}{_ci('t')}"
_L = PLAIN_LETTER
APOWORD = _alt(
    f"{APOS}{_ci('n')}{APOS}?",
    f"[lLdDjJ]{APOS}",
    f"{_ci('Dunkin')}{APOS}",
    f"{_ci('somethin')}{APOS}",
    f"{_ci('ol')}{APOS}",
    f"{APOS}{_ci('em')}",
    f"[A-HJ-XZn]{APOSETCETERA}{_L}{{2}}{_L}*",
    f"{APOS}[2-9]{_ci('0s')}",
    f"{APOS}{_ci('til')}{_ci('l')}?",
    f"{_L}{_L}*[aeiouyAEIOUY]{APOSETCETERA}[aeiouA-Z]{_L}*",
    f"{APOS}{_ci('cause')}",
    f"{_ci('cont')}'{_ci('d')}\\.?",
    f"'{_ci('twas')}",
    f"{_ci('nor')}'{_ci('easter')}",
    f"{_ci('c')}'{_ci('mon')}",
    f"{_ci('e')}'{_ci('er')}",
    f"{_ci('s')}'{_ci('mores')}",
    f"{_ci('ev')}'{_ci('ry')}",
    f"{_ci('li')}'{_ci('l')}",
    f"{_ci('nat')}'{_ci('l')}",
    f"O{APOSETCETERA}{_ci('o')}",
)
APOWORD2 = f"{_ci('y')}{APOS}"
FULLURL = f'{_ci("http")}{_ci("s")}?://[^ \\t\\n\\f\\r"<>|(){{}}]+[^ \\t\\n\\f\\r"<>|.!?(){{}},\\-]'
LIKELYURL = (
    f'(?:(?:{_ci("www.")}(?:[^ \\t\\n\\f\\r"<>|.!?(){{}},]+\\.)+[a-zA-Z]{{2,4}})'
    f"|(?:(?:[^ \\t\\n\\f\\r\"`'<>|.!?(){{}},-_$]+\\.)+{_words('com', 'net', 'org', 'edu')}))"
    '(?:/[^ \\t\\n\\f\\r"<>|()]+[^ \\t\\n\\f\\r"<>|.!?(){},\\-])?'
)
EMAIL = (
    f'(?:{_ci("&lt;")}|<)?[a-zA-Z0-9][^ \\t\\n\\f\\r"<>|()\u00a0{{}}]*@'
    f'(?:[^ \\t\\n\\f\\r"<>|(){{}}.\u00a0]+\\.)*(?:[^ \\t\\n\\f\\r"<>|(){{}}.\u00a0]+)(?:{_ci("&gt;")}|>)?'
)
TWITTER = f"(?:@[a-zA-Z_][a-zA-Z_0-9]*|#{LETTER}+)"

ABMONTH = _words("Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sept", "Sep", "Oct", "Nov", "Dec")
ABDAYS = _words("Mon", "Tues", "Tue", "Wed", "Thurs", "Thu", "Fri")
ABSTATE = _alt(
    _words("Ala", "Ariz"),
    "A" + _ci("z"),
    "A" + _ci("rk"),
    _words("Calif", "Colo", "Conn", "Ct", "Dak"),
    "D" + _ci("el"),
    _words("Fla", "Ga"),
    "I" + _ci("ll"),
    _ci("Ind"),
    _ci("Kan") + _ci("s") + "?",
    _ci("Ky"),
    "L" + _ci("a"),
    "M" + _ci("ass"),
    _words("Md", "Mich", "Minn"),
    "M" + _ci("iss"),
    _words("Mont", "Mo", "Neb", "Nev", "Okla"),
    "O" + _ci("re"),
    "P" + _ci("a"),
    _words("Penn", "Tenn"),
    "T" + _ci("ex"),
    _words("Va", "Vt"),
    "W" + _ci("ash"),
    _ci("Wis") + _ci("c") + "?",
    _ci("Wyo"),
)
ABCOMP = _alt(
    _ci("Inc"),
    _ci("Co") + _ci("s") + "?",
    _ci("Corp"),
    f"{_ci('P')}{_ci('p')}?{_ci('t')}[yeYE]{_ci('s')}?",
    _words("Ltd", "Plc", "Rt", "Bancorp", "Bhd", "Assn", "Univ", "Intl", "Sys"),
)
ABNUM = _words("tel", "est", "ext", "sq")
ABPTIT = _alt(_words("Jr", "Sr", "Bros"), f"{_words('Ed', 'Ph')}\\.{_ci('D')}", _words("Blvd", "Rd", "Esq"))
ABBREV1 = (
    f"(?:{ABMONTH}|{ABDAYS}|{ABSTATE}|{ABCOMP}|{ABNUM}|{ABPTIT}|{_words('etc', 'al', 'seq', 'Bldg')})\\."
)
ABTITLE = _alt(
    _words("Mrs", "Mr", "Ms"),
    "M" + _ci("iss"),
    _ci("Dr") + _ci("s") + "?",
    _ci("Prof") + _ci("s") + "?",
    _ci("Sen") + _ci("s") + "?",
    _ci("Rep") + _ci("s") + "?",
    _ci("Atty") + _ci("s") + "?",
    _words("Lt", "Col", "Gen", "Messrs"),
    _ci("Gov") + _ci("s") + "?",
    _words("Adm", "Rev", "Maj", "Sgt", "Cpl", "Pvt", "Capt"),
    _ci("St") + _ci("e") + "?",
    _words("Ave", "Pres", "Lieut", "Hon", "Brig"),
    f"{_ci('C')}{_ci('o')}?{_ci('mdr')}",
    _words("Pfc", "Spc"),
    _ci("Supt") + _ci("s") + "?",
    _words("Det", "Mt", "Ft", "Adj", "Adv", "Asst", "Assoc", "Ens", "Insp", "Mlle", "Mme", "Msgr", "Sfc"),
)
ABCOMP2 = _alt(_words("Invt", "Elec", "Natl", "Dept"), f"{_ci('M')}[ftFT]{_ci('g')}")
ABBREV4 = _alt(
    ABTITLE,
    _words("vs", "Alex", "Wm", "Jos", "Cie"),
    _ci("a.k.a"),
    _words("cf", "TREAS", "Ph"),
    ACRO,
    ABCOMP2,
)
ABBREV2 = f"{ABBREV4}\\."
ACRONYM = f"{ACRO}\\."
ABBREV3 = f"(?:{_words('ca', 'figs', 'fig', 'prop', 'nos', 'no', 'art', 'bldg', 'pp', 'op')})\\."
PHONE = (
    "(?:(?:\\([0-9]{2,3}\\)[ \u00a0]?|(?:\\+\\+?)?(?:[0-9]{2,4}[\\- \u00a0])?[0-9]{2,4}[\\- \u00a0])"
    "[0-9]{3,4}[\\- \u00a0]?[0-9]{3,5}"
    "|(?:(?:\\+\\+?)?[0-9]{2,4}\\.)?[0-9]{2,4}\\.[0-9]{3,4}\\.[0-9]{3,5})"
)
LDOTS = "(?:\\.{3,5}|(?:\\.[ \u00a0]){2,4}\\.|[\u0085\u2026])"
INSENTP = "[,;:\u3001]"
QUOTES = (
    f"(?:[`\u2018\u2019\u201a\u201b\u201c\u201d\u0091\u0092\u0093\u0094\u201e\u201f\u2039\u203a\u00ab\u00bb]{{1,2}}"
    f"|''|{APOS})"
)
DBLQUOT = f'(?:"|{_ci("&quot;")})'
TBSPEC = _alt(
    f"-{_words('RRB', 'LRB', 'RCB', 'LCB', 'RSB', 'LSB')}-",
    _ci("C.D.s"),
    _ci("pro-"),
    _ci("anti-"),
    f"{_ci('S')}(?:&|{SPAMP}){_ci('P-500')}",
    f"{_ci('S')}(?:&|{SPAMP}){_ci('Ls')}",
    f"{_ci('Cap')}{APOS}{_ci('n')}",
    f"{_ci('c')}{APOS}{_ci('est')}",
)
TBSPEC2 = f"{APOS}[0-9][0-9]"
SMILEY = "[<>]?[:;=][\\-o\\*']?[()DPdpO\\\\{@|\\[\\]]"
ASIANSMILEY = (
    "(?:[\\^x=~<>]\\.\\[\\^x=~<>]|[\\-\\^x=~<>']_[\\-\\^x=~<>']|\\([\\-\\^x=~<>'][_.]?[\\-\\^x=~<>']\\)"
    "|\\([\\^x=~<>']-[\\^x=~<>'`]\\))"
)
_ACRONYM_NEXT = _alt(
    *(
        f"{word[0]}{_ci(word[1:])}" if len(word) > 1 else word
        for word in [
            "About",
            "According",
            "Additionally",
            "After",
            "An",
            "As",
            "At",
            "A",
            "But",
            "Earlier",
            "Her",
            "Here",
            "However",
            "He",
            "If",
            "In",
            "It",
            "Last",
            "Many",
            "More",
            "Now",
            "Once",
            "One",
            "Other",
            "Our",
            "She",
            "Since",
            "So",
            "Some",
            "Such",
            "That",
            "Their",
            "Then",
            "There",
            "These",
            "They",
            "The",
            "This",
            "We",
            "When",
            "While",
            "What",
            "Yet",
            "You",
        ]
    ),
    f"M{_ci('r.')}",
    f"M{_ci('s.')}",
    SGML,
)
SENTEND = f"{SPACENL}(?:{SPACENL}|[{_UPPER_CLASS}]|{SGML})"


# --------------------------------------------------------------------------------------------------
# Actions. Each rule's action turns the matched text into zero or more tokens.

_SKIP, _PLAIN, _WORD, _QUOTE_RIGHT, _QUOTE_LEFT, _AMP, _NBSP, _FRACTION, _CURRENCY = range(9)
_DASH, _ACRONYM_DOT, _ABBREV_DOT, _PHONE, _PARENS, _HYPHENS, _ELLIPSIS, _NEWLINE = range(9, 17)
_LRB, _RRB, _LCB, _RCB, _LSB, _RSB, _LESS, _GREATER = range(17, 25)

_FRACTIONS = str.maketrans(
    {"\u00bc": "1/4", "\u00bd": "1/2", "\u00be": "3/4", "\u2153": "1/3", "\u2154": "2/3"}
)
_CURRENCIES = str.maketrans(
    {"\u00a2": "cents", "\u00a3": "#", "\u0080": "$", "\u00a4": "$", "\u20a0": "$", "\u20ac": "$"}
)
_AMP_ENTITY = re.compile("&amp;", re.IGNORECASE)
_SINGLE_QUOTE = re.compile("&apos;|'")
_DOUBLE_QUOTE = re.compile('"|&quot;')
_LATEX_QUOTES = str.maketrans(
    {
        "\u0091": "`",
        "\u2018": "`",
        "\u201b": "`",
        "\u2039": "`",
        "\u0092": "'",
        "\u2019": "'",
        "\u203a": "'",
        "\u0093": "``",
        "\u201c": "``",
        "\u00ab": "``",
        "\u0094": "''",
        "\u201d": "''",
        "\u00bb": "''",
    }
)


def _latex_quotes(text: str, probably_left: bool) -> str:
    if probably_left:
        text = _DOUBLE_QUOTE.sub("``", _SINGLE_QUOTE.sub("`", text))
    else:
        text = _DOUBLE_QUOTE.sub("''", _SINGLE_QUOTE.sub("'", text))
    return text.translate(_LATEX_QUOTES)


def _without_soft_hyphens(text: str) -> str:
    if "\u00ad" not in text:
        return text
    return text.replace("\u00ad", "") or "-"


def _parens(text: str) -> str:
    return text.replace("(", "-LRB-").replace(")", "-RRB-")


_FIXED = {_LRB: "-LRB-", _RRB: "-RRB-", _LCB: "-LCB-", _RCB: "-RCB-", _LSB: "-LSB-", _RSB: "-RSB-"}
_FIXED |= {_LESS: "<", _GREATER: ">", _DASH: "--", _ELLIPSIS: "..."}


# --------------------------------------------------------------------------------------------------
# The rules, in the grammar's order (the tie-breaker). (pattern, trailing context or None, action).

_RULE_SPECS: list[tuple[str, str | None, int]] = [
    (_ci("c++"), None, _PLAIN),
    (f"(?:{_ci('c')}|{_ci('f')})#", None, _PLAIN),
    (_ci("cannot"), None, -3),  # negative: push that many characters back (split assimilations)
    ("'" + _ci("twas"), None, -3),
    ("'" + _ci("tis"), None, -2),
    (_words("gonna", "gotta", "lemme", "gimme", "wanna"), None, -2),
    (SGML, None, _NBSP),
    (SPMDASH, None, _DASH),
    (SPAMP, None, _AMP),
    (SPPUNC, None, _PLAIN),
    (WORD, REDAUX, _WORD),
    (SWORD, SREDAUX, _WORD),
    (WORD, None, _WORD),
    (APOWORD, None, _PLAIN),
    (APOWORD2, PLAIN_LETTER, _PLAIN),
    (FULLURL, None, _PLAIN),
    (LIKELYURL, None, _PLAIN),
    (EMAIL, None, _PLAIN),
    (TWITTER, None, _PLAIN),
    (REDAUX, "[^A-Za-z]", _QUOTE_RIGHT),
    (SREDAUX, "[^A-Za-z]", _QUOTE_RIGHT),
    (DATE, None, _PLAIN),
    (NUMBER, None, _WORD),
    (SUBSUPNUM, None, _PLAIN),
    (FRAC, None, _NBSP),
    (FRAC2, None, _FRACTION),
    (TBSPEC, None, _AMP),
    (THING3, None, _PLAIN),
    (DOLSIGN, None, _PLAIN),
    (DOLSIGN2, None, _CURRENCY),
    (ACRONYM, f"{SPACENLS}{_ACRONYM_NEXT}{SPACENL}", _ACRONYM_DOT),
    (ABBREV3, f"{SPACENL}?{PLAIN_DIGIT}", _PLAIN),
    (f"(?:{_ci('pt')}[eyEY]|{_ci('co')})\\.", f"{SPACE}{_words('ltd', 'lim')}", _PLAIN),
    (ABBREV1, SENTEND, _ABBREV_DOT),
    (ABBREV1, "(?s:..)", _PLAIN),
    (ABBREV1, None, _ABBREV_DOT),
    (ABBREV2, None, _PLAIN),
    (ABBREV4, SPACE, _PLAIN),
    (ACRO, SPACENL, _PLAIN),
    (TBSPEC2, SPACENL, _PLAIN),
    (FILENAME, f"(?:{SPACENL}|[.?!,])", _PLAIN),
    (f"{WORD}\\.", INSENTP, _WORD),
    (PHONE, None, _PHONE),
    (DBLQUOT, "[A-Za-z0-9$]", _QUOTE_LEFT),
    (DBLQUOT, None, _QUOTE_RIGHT),
    ("\x7f", None, _SKIP),
    (f"(?:<|{_ci('&lt;')})", None, _LESS),
    (f"(?:>|{_ci('&gt;')})", None, _GREATER),
    (SMILEY, "[^A-Za-z0-9]", _PARENS),
    (ASIANSMILEY, None, _PARENS),
    ("\\{", None, _LCB),
    ("\\}", None, _RCB),
    ("\\[", None, _LSB),
    ("\\]", None, _RSB),
    ("\\(", None, _LRB),
    ("\\)", None, _RRB),
    ("-+", None, _HYPHENS),
    (LDOTS, None, _ELLIPSIS),
    ("(?:@+|#+|_+)", None, _PLAIN),
    ("(?:\\*+|(?:\\\\\\*){1,3})", None, _PLAIN),
    (INSENTP, None, _PLAIN),
    ("[?!]+", None, _PLAIN),
    ("[.\u00a1\u00bf\u037e\u0589\u061f\u06d4\u0700-\u0702\u07fa\u3002]", None, _PLAIN),
    ("=", None, _PLAIN),
    ("/", None, _PLAIN),
    (f"{HTHING}\\.", INSENTP, _WORD),
    (HTHING, None, _WORD),
    (f"{THING}\\.", INSENTP, _PLAIN),
    (THING, None, _PLAIN),
    (f"{THINGA}\\.", INSENTP, _AMP),
    (THINGA, None, _AMP),
    ("'", "[A-Za-z][^ \\t\\n\\r\u00a0]", _QUOTE_LEFT),
    (REDAUX, None, _QUOTE_RIGHT),
    (SREDAUX, None, _QUOTE_RIGHT),
    (QUOTES, None, _QUOTE_RIGHT),
    ("(?:<<|>>)", None, _PLAIN),
    (f"[{_MISC_SYMBOL}]", None, _PLAIN),
    (f"(?:\\x00|{SPACE}+|[\u200b\u200e\u200f\ufeff])", None, _SKIP),
    (NEWLINE, None, _NEWLINE),
    (_ci("&nbsp;"), None, _SKIP),
]


def _compile_rules() -> list[tuple[re.Pattern[str], bool, int]]:
    rules = []
    for pattern, trail, action in _RULE_SPECS:
        if trail is None:
            rules.append((re.compile(pattern), False, action))
        else:
            rules.append((re.compile(f"({pattern})(?:{trail})"), True, action))
    return rules


_RULES = _compile_rules()


# Which rules can start with a given character, so that the scanner tries only those. The sets are
# read from the parsed patterns; anything the reader does not understand counts as "any character",
# which is always correct, only slower.
_ANY = None


def _first_chars(items, ignore_case: bool) -> tuple[set[int] | None, bool]:
    """(characters a match can start with, or _ANY; whether the sequence can match empty)."""
    from re import _constants as c  # noqa: PLC0415 - the parser's opcodes, used only here

    chars: set[int] = set()
    for op, arg in items:
        nullable = False
        if op is c.LITERAL:
            found = {arg}
        elif op is c.IN:
            found = set()
            for kind, value in arg:
                if kind is c.LITERAL:
                    found.add(value)
                elif kind is c.RANGE:
                    found.update(range(value[0], value[1] + 1))
                else:  # NEGATE, CATEGORY ...
                    return _ANY, False
        elif op is c.SUBPATTERN:
            _group, add_flags, _del_flags, body = arg
            found, nullable = _first_chars(body, ignore_case or bool(add_flags & re.IGNORECASE))
        elif op is c.BRANCH:
            found, nullable = set(), False
            for branch in arg[1]:
                sub, sub_nullable = _first_chars(branch, ignore_case)
                if sub is _ANY:
                    return _ANY, False
                found |= sub
                nullable = nullable or sub_nullable
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, _high, body = arg
            found, nullable = _first_chars(body, ignore_case)
            nullable = nullable or low == 0
        else:
            return _ANY, False
        if found is _ANY:
            return _ANY, False
        if ignore_case:
            found = found | {ord(chr(point).swapcase()[0]) for point in found if chr(point).isascii()}
        chars |= found
        if not nullable:
            return chars, False
    return chars, True


def _rule_first_chars() -> list[set[int] | None]:
    from re import _parser  # noqa: PLC0415

    firsts = []
    for pattern, _has_trail, _action in _RULES:
        try:
            chars, nullable = _first_chars(_parser.parse(pattern.pattern), False)
        except Exception:  # noqa: BLE001 - a parser change only costs speed
            chars, nullable = _ANY, False
        firsts.append(_ANY if nullable else chars)
    return firsts


_FIRSTS = _rule_first_chars()


@lru_cache(maxsize=4096)
def _rules_for(char: str) -> tuple[tuple[re.Pattern[str], bool, int], ...]:
    point = ord(char)
    return tuple(rule for rule, first in zip(_RULES, _FIRSTS) if first is _ANY or point in first)


def _longest(text: str, pos: int) -> tuple[int, int, int]:
    """(main length, total length, action) of the rule JFlex picks at ``pos``; total 0 if none."""
    best_total = 0
    best_main = 0
    best_action = -100
    for pattern, has_trail, action in _rules_for(text[pos]):
        match = pattern.match(text, pos)
        if match is None:
            continue
        total = match.end() - pos
        if total > best_total:
            best_total = total
            best_main = (match.end(1) if has_trail else match.end()) - pos
            best_action = action
    return best_main, best_total, best_action


# Shortcuts of the scanner loop: stretches where the tokens are known without trying the rules,
# because no rule can match longer there. No rule crosses a plain space unless it starts with a digit
# (fractions "1 1/2", phone numbers "555 1234"), "<" (SGML) or "." (". . ."), or its text ends in a
# dot (abbreviations). So a run of ASCII words, each followed by spaces or tabs, is those words (a
# number only if no digit follows its one space), and the run's last word is one token too before
# the line end or , ; ! ? followed by a space or the line end, or before a dot so followed unless the
# word and its dot are an abbreviation. The assimilations (cannot, gonna ...) are split as the rule
# for them does: "can not", "gon na".
_ITEM = r"[A-Za-z]++(?:-[A-Za-z]++)*+"  # hyphenated words are one token ("black-and-white")
_RUN = re.compile(rf"[ \t]*+(?:(?:{_ITEM}|[0-9]++(?=[ \t](?![0-9])))[ \t]++)*+")
_RUN_ITEM = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*|[0-9]+")
_LAST = re.compile(
    rf"(?:(?P<word>{_ITEM})(?=[,;!?](?:[ \t]|$)|\u2026(?:[ \t]|$)|$)"
    rf"|(?P<dotted>{_ITEM})(?=\.++(?:[ \t]|$))"
    r"|(?P<number>[0-9]++)(?=[,;.!?](?:[ \t]|$)|$))"
)
# Sentence punctuation before a space or the line end: "." (unless ". ." may start a spaced ellipsis),
# "," ";" ":" (not "," before a digit: ",5" is a number; not ";)"), runs of ? and !, and "..." to
# "....." and "\u2026" (both give "...").
_PUNCT = re.compile(r"[.,;:](?=[ \t](?![ \t]*\.)|$)|[?!]++(?=[ \t]|$)|(?:\.{3,5}+|\u2026)(?=[ \t]|$)")
_ASSIMILATIONS = frozenset({"cannot", "gonna", "gotta", "lemme", "gimme", "wanna"})


def _add_words(tokens: list[str], words: list[str]) -> None:
    for word in words:
        if len(word) in (5, 6) and word.lower() in _ASSIMILATIONS:
            keep = len(word) - (3 if len(word) == 6 else 2)
            tokens += (word[:keep], word[keep:])
        else:
            tokens.append(word)


def ptb_tokens(line: str, following: str = "") -> list[str]:
    """The Java tokenizer's tokens for one line, before lowercasing and punctuation removal.

    ``following`` is what comes after the line in the file (``"\\n"`` and the next captions), which a
    few rules look at; empty for the last line.
    """
    text = line + following
    end = len(line)
    pos = 0
    tokens: list[str] = []
    while pos < end:
        stop = _RUN.match(text, pos, end).end()
        if stop > pos:
            _add_words(tokens, _RUN_ITEM.findall(text, pos, stop))
            pos = stop
            if pos >= end:
                break
        last = _LAST.match(text, pos, end)
        if last is not None and not (
            last.lastgroup == "dotted" and _is_abbreviation(text[pos : last.end() + 1])
        ):
            _add_words(tokens, [last.group()])
            pos = last.end()
            continue
        punct = _PUNCT.match(text, pos, end)
        if punct is not None:
            stop = punct.end()
            ellipsis = text[pos] == "\u2026" or (text[pos] == "." and stop - pos >= 3)
            tokens.append("..." if ellipsis else text[pos:stop])
            pos = stop
            continue
        length, total, action = _longest(text, pos)
        if total == 0:  # untokenizable: deleted
            pos += 1
            continue
        token = text[pos : pos + length]
        if action < 0 and action != -100:
            length += action
            token = token[:length]
            tokens.append(token)
        elif action == _PLAIN:
            tokens.append(token)
        elif action == _WORD:
            tokens.append(_without_soft_hyphens(token))
        elif action in _FIXED:
            tokens.append(_FIXED[action])
        elif action == _QUOTE_RIGHT:
            tokens.append(_latex_quotes(token, False))
        elif action == _QUOTE_LEFT:
            tokens.append(_latex_quotes(token, True))
        elif action == _AMP:
            tokens.append(_AMP_ENTITY.sub("&", token))
        elif action == _NBSP:
            tokens.append(token.replace(" ", "\u00a0"))
        elif action == _PHONE:
            tokens.append(_parens(token.replace(" ", "\u00a0")))
        elif action == _PARENS:
            tokens.append(_parens(token))
        elif action == _FRACTION:
            tokens.append(token.translate(_FRACTIONS))
        elif action == _CURRENCY:
            tokens.append(token.translate(_CURRENCIES))
        elif action == _HYPHENS:
            tokens.append("--" if 3 <= length <= 4 else token)
        elif action == _ACRONYM_DOT:
            if length == 2:
                length = 1
                tokens.append(token[:1])
            else:
                length -= 1  # the word keeps its dot, and the dot is read again as a sentence end
                tokens.append(token)
        elif action == _ABBREV_DOT:
            tokens.append(token)
            length -= 1
        # _SKIP and _NEWLINE (a line break inside a caption, see the module notes) produce nothing
        pos += length
    return tokens


# --------------------------------------------------------------------------------------------------
# The public functions. A line is cut at plain spaces and tabs into chunks, and a chunk's tokens are
# cached: no rule matches across a plain space or tab, and only a few look past one: where the chunk
# before it ends in a dot (abbreviations look at the next word; ". . ." is one token), contains "<"
# (SGML tags hold spaces), or ends in a digit or ")" before a digit (fractions "1 1/2", phone numbers
# "(555) 123 4567"). Lines with "<", ". ." or such digits are scanned whole; a chunk that ends in a
# dot is scanned with the next chunk (or the next line) after it. Any other chunk is tokenised as if
# followed by a space, which for the line's last chunk is the same as followed by the line break.

# A rule crosses spaces after a chunk ending in one of _GAP_END before one starting with _GAP_START.
_GAP_END, _GAP_START = r"[\d)]", r"\d"
_UNSAFE = re.compile(rf"<|{_GAP_END}[ \t]+{_GAP_START}|\.[ \t]+\.")
_CHUNK = re.compile(r"[^ \t]+")
_WORD_DOT = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*\.")
_CHUNK_CACHE_LIMIT = 500_000
# chunk -> its tokens; "\n" stands for the line break of a whole file, "" for two spaces in a row.
_LINE_BREAK = ("\n",)  # a marker told apart by identity: no token is this object
_chunk_caches: dict[bool, dict[str, tuple[str, ...]]] = {
    True: {"\n": _LINE_BREAK, "": ()},
    False: {"\n": _LINE_BREAK, "": ()},
}
_ABBREVIATION = re.compile(_alt(ABBREV1, ABBREV2, ABBREV3, ACRONYM, f"(?:{_ci('pt')}[eyEY]|{_ci('co')})\\."))


@lru_cache(maxsize=8192)
def _is_abbreviation(word: str) -> bool:
    return _ABBREVIATION.fullmatch(word) is not None


# Line breaks for the Java lexer other than "\n" (see the module notes): spaces here.
_OTHER_LINE_BREAKS = str.maketrans(dict.fromkeys("\r\u000b\u000c\u0085\u2028\u2029", " "))
_HAS_OTHER_LINE_BREAK = re.compile("[\r\u000b\u000c\u0085\u2028\u2029]")
_SPACE_CHARS = " \t\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u3000"


def _finish(tokens: list[str], lowercase: bool) -> list[str]:
    if lowercase:
        # As pycocoevalcap: the jar lowercases, then the (upper-case) bracket names no longer match
        return [low for low in (token.lower() for token in tokens) if low not in PUNCTUATIONS]
    return [token for token in tokens if token not in PUNCTUATIONS]


def _clean(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"a caption must be a string, not {type(text).__name__}")
    if "\n" in text:
        text = text.replace("\n", " ")
    if not text.isascii() and _HAS_OTHER_LINE_BREAK.search(text) is not None:
        # str.translate walks a non-ASCII string character by character through a dict: ~10 us a
        # caption, most of the cleaning time of a file; the search is a single fast scan.
        text = text.translate(_OTHER_LINE_BREAKS)
    return text


@lru_cache(maxsize=65536)
def _tokens_in_context(text: str, following: str, lowercase: bool) -> tuple[str, ...]:
    return tuple(_finish(ptb_tokens(text, following), lowercase))


def _chunk_tokens(chunk: str, lowercase: bool) -> tuple[str, ...]:
    cache = _chunk_caches[lowercase]
    tokens = cache.get(chunk)
    if tokens is None:
        if len(cache) >= _CHUNK_CACHE_LIMIT:
            cache.clear()
            cache.update({"\n": _LINE_BREAK, "": ()})
        tokens = cache[chunk] = tuple(_finish(ptb_tokens(chunk, " "), lowercase))
    return tokens


# Contexts that set off each look-ahead an abbreviation has past a space: a sentence starter (and an
# upper-case letter), a digit (fig. 3), "Ltd" after "Co.", two line breaks, a tag, and none at all.
_PROBES = (" The ", " 5 ", " Ltd ", "\n\n", " <b> ", " x ")


def _context_free_dotted(chunk: str, lowercase: bool) -> tuple[str, ...] | None:
    """Tokens of a chunk that ends in a dot when they do not depend on what follows, else None.

    Only an abbreviation there looks past the space; when every context gives the same tokens (a
    plain word with its dot, but also "Mr." or "etc.", whose extra sentence-final dot is
    punctuation), they are cached like any chunk's.
    """
    cache = _chunk_caches[lowercase]
    if _WORD_DOT.fullmatch(chunk) and not _is_abbreviation(chunk):
        word = chunk[:-1]
        if len(word) in (5, 6) and word.lower() in _ASSIMILATIONS:
            tokens = _chunk_tokens(word, lowercase)
        else:
            tokens = (word.lower() if lowercase else word,)
        cache[chunk] = tokens
        return tokens
    variants = {_tokens_in_context(chunk, probe, lowercase) for probe in _PROBES}
    if len(variants) == 1:
        tokens = cache[chunk] = variants.pop()
        return tokens
    return None


def _dotted_chunk_tokens(chunk: str, following: Callable[[], str], lowercase: bool) -> tuple[str, ...]:
    """Tokens of a chunk that ends in a dot, given what follows it."""
    tokens = _context_free_dotted(chunk, lowercase)
    if tokens is None:
        tokens = _tokens_in_context(chunk, following(), lowercase)
    return tokens


def _line_tokens(text: str, following: Callable[[], str], lowercase: bool) -> list[str]:
    """Tokens of one cleaned caption; ``following()`` gives what comes after it in the file."""
    if _UNSAFE.search(text) is not None:
        return list(_tokens_in_context(text, following(), lowercase))
    chunks = _CHUNK.findall(text)
    last = len(chunks) - 1
    parts = []
    for index, chunk in enumerate(chunks):
        if chunk[-1] == ".":
            # What follows a chunk, as far as a rule looks: the next chunk after one space (the
            # number of spaces and tabs does not matter to any rule), or the line's own following.
            after = (lambda i=index: f" {chunks[i + 1]} ") if index < last else following
            parts.append(_dotted_chunk_tokens(chunk, after, lowercase))
        else:
            parts.append(_chunk_tokens(chunk, lowercase))
    return list(chain.from_iterable(parts))


def tokenize(text: str, *, lowercase: bool = True) -> list[str]:
    """The tokens pycocoevalcap 1.2 gives for ``text`` among other captions (see the module notes).

    PTB tokens, lowercased (unless ``lowercase=False``: then the tokens the Java tokenizer gives
    without ``-lowerCase``), with pycocoevalcap's punctuation tokens removed. Raises ``TypeError``
    for a caption that is not a string.
    """
    return _line_tokens(_clean(text), _neutral, lowercase)


# A line break and a next caption that starts with nothing any rule looks for.
_NEUTRAL_NEXT_LINE = "\n."


def _neutral() -> str:
    return _NEUTRAL_NEXT_LINE


def _context(cleaned: Sequence[str], index: int) -> str:
    """What follows caption ``index`` in pycocoevalcap's file, as far as any rule looks ahead."""
    if index + 1 >= len(cleaned):
        return ""
    line = cleaned[index].rstrip(_SPACE_CHARS)
    if not line.endswith("."):
        # Only an abbreviation or a single letter with a dot looks beyond the line break itself
        return _NEUTRAL_NEXT_LINE
    following = "\n" + "\n".join(cleaned[index + 1 : index + 4])
    # The look-aheads read spaces and line breaks, then one word and the character after it (or a
    # tag, which may hold spaces): keep that much, so that equal contexts are cached once.
    start = len(following) - len(following.lstrip(_SPACE_CHARS + "\n"))
    if following[start : start + 1] == "<":
        return following[:200]
    stop = following.find(" ", start)
    return following[: stop + 1] if stop >= 0 else following[:200]


def tokenize_many(texts: Iterable[str], *, lowercase: bool = True) -> list[list[str]]:
    """Tokens of each caption exactly as ONE pycocoevalcap call on ``texts``, in that order, gives them.

    The same as ``[tokenize(t) for t in texts]`` except for the few captions whose tokens depend on
    the caption after them or on being the last (see the module notes). Repeated captions are
    tokenised once. Raises ``TypeError`` for a caption that is not a string.
    """
    vocabulary: dict[str, int] = {}
    ids, starts = tokenize_many_ids(texts, vocabulary, lowercase=lowercase)
    # The result is hundreds of thousands of small lists made in one go; the cyclic garbage
    # collector would walk the young ones again and again and finds nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        tokens = np.array(list(vocabulary), dtype=object)[ids].tolist()
        bounds = starts.tolist()
        return [tokens[start:stop] for start, stop in zip(bounds, bounds[1:])]
    finally:
        if collecting:
            gc.enable()


def tokenize_many_ids(
    texts: Iterable[str], vocabulary: dict[str, int], *, lowercase: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tokenize_many` as token ids: ``(ids, starts)``, caption ``i`` being ``ids[starts[i]:starts[i + 1]]``.

    ``vocabulary`` (token -> id) is extended in place with the new tokens, numbered on from
    ``len(vocabulary)``, so that several files (references, then candidates, as pycocoevalcap
    tokenises them) share one numbering. The tokens are those of :func:`tokenize_many` on ``texts``;
    the vocabulary may also have gained tokens that none of them uses in the end (a chunk whose line
    is read whole instead): :meth:`TokenCorpus.from_ids` drops those. Raises ``TypeError`` for a
    caption that is not a string.

    Why: scoring needs integer ids, and making a Python string of every chunk of a file, let alone
    of every token, is most of the time at 50,000 images (~3M chunks). Here the file is cut into
    chunks with numpy (:mod:`.chunks`), each distinct chunk is tokenised and interned once, and the
    file becomes ids with numpy.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _file_ids(texts, vocabulary, lowercase)
    finally:
        if collecting:
            gc.enable()


def _file_ids(
    texts: Iterable[str], vocabulary: dict[str, int], lowercase: bool
) -> tuple[np.ndarray, np.ndarray]:
    cleaned, chunks = _split_file(texts)
    if not cleaned:
        return np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    intern = vocabulary.setdefault

    def ids(tokens: Sequence[str]) -> tuple[int, ...]:
        return tuple([intern(token, len(vocabulary)) for token in tokens])

    cache = _chunk_caches[lowercase]
    _tokenise_new_chunks([chunk for chunk in chunks.distinct if chunk not in cache], lowercase)
    # The token ids of each distinct chunk. A line break has none, nor, for now, a chunk still missing
    # from the cache: that one is read in context below, occurrence by occurrence.
    code_ids: list[tuple[int, ...]] = []
    contextual: list[int] = []
    for code, chunk in enumerate(chunks.distinct):
        tokens = cache.get(chunk)
        if tokens is None:
            contextual.append(code)
        code_ids.append(ids(tokens) if tokens is not None and tokens is not _LINE_BREAK else ())
    codes = chunks.codes
    line_breaks = np.flatnonzero(codes == chunks.code_of("\n"))
    in_context: dict[int, tuple[int, ...]] = {}  # chunk index -> its token ids
    if contextual:
        where = _occurrences(codes, contextual, len(code_ids)).tolist()
        for index, tokens in _in_context(cleaned, chunks, where, lowercase, line_breaks.tolist()):
            in_context[index] = ids(tokens)
    token_ids, ends = _chunk_token_ids(codes, code_ids, in_context)
    # Tokens per line: a line break chunk has none, so the tokens up to it are its line's and before.
    lengths = np.diff(ends[line_breaks], prepend=0)
    del ends
    overrides = {
        index: ids(tokens) for index, tokens in _whole_lines(cleaned, chunks, line_breaks, lowercase)
    }
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    if overrides:
        pieces, done = [], 0
        for index in sorted(overrides):
            pieces.append(token_ids[starts[done] : starts[index]])
            pieces.append(np.asarray(overrides[index], dtype=np.int64))
            lengths[index] = len(overrides[index])
            done = index + 1
        pieces.append(token_ids[starts[done] :])
        token_ids = np.concatenate(pieces)
        np.cumsum(lengths, out=starts[1:])
    return token_ids, starts


def _chunk_token_ids(
    codes: np.ndarray, code_ids: list[tuple[int, ...]], in_context: dict[int, tuple[int, ...]]
) -> tuple[np.ndarray, np.ndarray]:
    """``(token ids, ends)`` of a file whose chunk ``i`` has code ``codes[i]``: ``code_ids[code]`` are a
    code's token ids, ``in_context[i]`` replaces those of chunk ``i``, and chunk ``i``'s tokens end at
    ``ends[i]``.

    Each chunk's first token is repeated once per token of the chunk, then the further tokens of the
    chunks that have several (clitics: "don't" is "do", "n't") are written over the copies, token
    by token, so that the work follows the tokens, not the longest chunk.
    """
    n_codes = len(code_ids)
    code_length = np.fromiter(map(len, code_ids), dtype=np.int64, count=n_codes)
    chunk_length = code_length[codes]
    if in_context:
        chunk_length[list(in_context)] = [len(chunk_ids) for chunk_ids in in_context.values()]
    ends = np.cumsum(chunk_length)
    first_token = np.fromiter(
        (chunk_ids[0] if chunk_ids else -1 for chunk_ids in code_ids), dtype=np.int64, count=n_codes
    )
    token_ids = np.repeat(first_token[codes], chunk_length)
    several_codes = np.flatnonzero(code_length > 1)
    if len(several_codes):
        # Their token ids in one flat table, each code's from ``offset[code]`` on.
        offset = np.zeros(n_codes, dtype=np.int64)
        offset[several_codes] = np.cumsum(code_length[several_codes]) - code_length[several_codes]
        table = np.fromiter(
            chain.from_iterable(code_ids[code] for code in several_codes.tolist()),
            dtype=np.int64,
            count=int(code_length[several_codes].sum()),
        )
        several = _occurrences(codes, several_codes, n_codes)
        where = ends[several] - chunk_length[several]  # where each one's tokens start
        source = offset[codes[several]]
        remaining = chunk_length[several] - 1
        while len(remaining):  # token j of those that have one, j = 1, 2 ...
            keep = np.flatnonzero(remaining > 0)
            where, source, remaining = where[keep] + 1, source[keep] + 1, remaining[keep] - 1
            token_ids[where] = table[source]
    for index, chunk_ids in in_context.items():
        token_ids[ends[index] - len(chunk_ids) : ends[index]] = chunk_ids
    return token_ids, ends


def _split_file(texts: Iterable[str]) -> tuple[list[str], Chunks]:
    """``(cleaned captions, the file's chunks)`` of one pycocoevalcap file: the captions joined by
    ``" \\n "`` and ended by ``" \\n"``, tabs made spaces, cut at the spaces. So every line break is
    the chunk ``"\\n"``, the last line's included, and two spaces in a row hold the chunk ``""``."""
    captions = list(texts)
    if not captions:
        return captions, split_chunks(b"")
    # Usually no caption needs cleaning, which the file's line breaks and its distinct chunks tell
    # (the other line breaks are not spaces, so a caption holding one has a chunk holding it).
    blob = _file_bytes(captions)
    if blob is not None and blob.count(b"\n") == len(captions):
        chunks = split_chunks(blob, padded=True)
        if not any(_HAS_OTHER_LINE_BREAK.search(chunk) for chunk in chunks.distinct):
            return captions, chunks
    try:
        cleaned = [text if text.isascii() and "\n" not in text else _clean(text) for text in captions]
    except (AttributeError, TypeError):
        cleaned = [_clean(text) for text in captions]  # raises TypeError naming the bad caption's type
    return cleaned, split_chunks(_file_bytes(cleaned), padded=True)


def _file_bytes(captions: list[str]) -> bytes | None:
    """The UTF-8 file of the captions as :func:`_split_file` describes it, then the padding
    :func:`.chunks.split_chunks` takes; None if a caption is not a string."""
    try:
        # Encoding caption by caption keeps ASCII captions a copy; encoding the joined file would
        # convert all of it once one caption is not ASCII (~40% less time on caption-like files).
        encoded = [text.encode() for text in captions]
    except UnicodeEncodeError:  # a lone surrogate, which Python strings may hold
        encoded = [text.encode("utf-8", "surrogatepass") for text in captions]
    except AttributeError:
        return None
    # The end, and split_chunks' padding, on the last caption: the joined file is not copied again.
    encoded[-1] += b" \n" + _PADDING
    blob = b" \n ".join(encoded)
    return blob.replace(b"\t", b" ") if b"\t" in blob else blob


def _tokenise_new_chunks(chunks: Iterable[str], lowercase: bool) -> None:
    """Put the tokens of each chunk in the cache, except a chunk ending in an abbreviation whose
    tokens depend on what follows it (those are left out: :func:`_in_context` gives them)."""
    for chunk in chunks:
        if chunk[-1] == ".":
            _context_free_dotted(chunk, lowercase)
        else:
            _chunk_tokens(chunk, lowercase)


def _in_context(
    cleaned: Sequence[str],
    flat: Sequence[str],
    indices: Iterable[int],
    lowercase: bool,
    line_ends: Sequence[int],
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """``(index, tokens)`` for the chunks ``flat[index]`` that need what follows them
    (``line_ends``: the indices of the ``"\\n"`` chunks)."""
    for index in indices:
        following_index = index + 1
        while not flat[following_index]:
            following_index += 1
        after = flat[following_index]
        context = f" {after} " if after != "\n" else _context(cleaned, bisect_right(line_ends, index))
        yield index, _tokens_in_context(flat[index], context, lowercase)


_ENDS_GAP = re.compile(rf"{_GAP_END}\Z")
_STARTS_GAP = re.compile(_GAP_START)


def _unsafe_lines(chunks: Chunks, line_breaks: np.ndarray) -> list[int]:
    """Indices of the lines where ``_UNSAFE`` matches (``line_breaks``: the indices of the ``"\\n"``
    chunks).

    Running the expression over a whole file is a third of the tokenising time of caption-like text
    (every position is a possible start), so the distinct chunks tell which can take part in a match
    (few can: a chunk with "<", one starting with a digit or a dot), only their occurrences are looked
    at, and the chunk before each, across the spaces, decides.
    """
    distinct = chunks.distinct
    codes = chunks.codes
    tags = [code for code, chunk in enumerate(distinct) if "<" in chunk]
    places = [_occurrences(codes, tags, len(distinct))] if tags else []
    ends = {code for code, chunk in enumerate(distinct) if _ENDS_GAP.search(chunk)}
    dot_ends = {code for code, chunk in enumerate(distinct) if chunk.endswith(".")}
    starts = {code for code, chunk in enumerate(distinct) if ends and _STARTS_GAP.match(chunk)}
    dot_starts = {code for code, chunk in enumerate(distinct) if dot_ends and chunk.startswith(".")}
    if starts or dot_starts:
        after = _occurrences(codes, sorted(starts | dot_starts), len(distinct))
        # The chunk before, across the spaces: chunks are one space apart, "" between two spaces.
        before = after - 1
        empty = chunks.code_of("")
        if empty is not None:
            while len(spaces := np.flatnonzero((before >= 0) & (codes[before] == empty))):
                before[spaces] -= 1
        opening = [code if index >= 0 else -1 for code, index in zip(codes[before].tolist(), before.tolist())]
        gap = [
            (close in starts and open_ in ends) or (close in dot_starts and open_ in dot_ends)
            for open_, close in zip(opening, codes[after].tolist())
        ]
        places.append(after[np.asarray(gap, dtype=bool)])
    if not places:
        return []
    return sorted(set(np.searchsorted(line_breaks, np.concatenate(places)).tolist()))


def _occurrences(codes: np.ndarray, wanted: Sequence[int] | np.ndarray, n_codes: int) -> np.ndarray:
    """Indices of the chunks whose code is one of ``wanted`` (a look-up table of the codes)."""
    table = np.zeros(n_codes, dtype=bool)
    table[np.asarray(wanted, dtype=np.int64)] = True
    return np.flatnonzero(table[codes])


def _whole_lines(
    cleaned: Sequence[str], chunks: Chunks, line_breaks: np.ndarray, lowercase: bool
) -> Iterable[tuple[int, tuple[str, ...]]]:
    """``(line index, tokens)`` of the lines whose chunk-by-chunk tokens must be replaced."""
    # Lines where a rule crosses a space are scanned whole, and so is the last line, which has no
    # line break after it.
    for index in _unsafe_lines(chunks, line_breaks):
        if index != len(cleaned) - 1:
            yield index, _tokens_in_context(cleaned[index], _context(cleaned, index), lowercase)
    yield len(cleaned) - 1, _tokens_in_context(cleaned[-1], "", lowercase)


def clear_cache() -> None:
    """Forget the tokens of captions seen before (for benchmarks that time a cold start)."""
    _tokens_in_context.cache_clear()
    for cache in _chunk_caches.values():
        cache.clear()
        cache.update({"\n": _LINE_BREAK, "": ()})

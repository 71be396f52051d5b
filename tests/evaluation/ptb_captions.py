"""Deterministic raw captions that exercise the PTB tokenizer, for its tests and benchmark.

Realistic caption templates ("A man riding a bike down the street.") with mutations: clitics and
possessives, hyphens and dashes, abbreviations, numbers, quotes of every kind, brackets, slashes,
ampersands and entities, ellipses, odd spacing, emoji, accents, non-Latin scripts, upper case, URLs,
e-mails, currency, degrees and times. ``captions(n, seed)`` gives a list; ``images(n, seed)`` gives
candidates and five references per image, for end-to-end scoring.
"""

from __future__ import annotations

import random

SUBJECTS = [
    "a man",
    "a woman",
    "two dogs",
    "the cat",
    "a young boy",
    "an old lady",
    "three kids",
    "a group of people",
    "a giraffe",
    "the player",
    "a chef",
    "people",
    "a baby",
    "the zebras",
    "a skateboarder",
    "a surfer",
    "James",
    "the dog",
    "a couple",
    "some sheep",
    "an elephant",
    "the children",
    "Mr. Smith",
    "Dr. Brown",
]
VERBS = [
    "riding",
    "sitting on",
    "standing next to",
    "holding",
    "eating",
    "walking down",
    "looking at",
    "playing with",
    "jumping over",
    "flying",
    "carrying",
    "cutting",
    "lying on",
    "throwing",
    "watching",
]
OBJECTS = [
    "a bike",
    "the street",
    "a red frisbee",
    "a pizza",
    "the beach",
    "a large kite",
    "a wooden bench",
    "a black-and-white photo",
    "the kitchen counter",
    "a tennis racket",
    "a snowy hill",
    "the table",
    "a plate of food",
    "a tall building",
    "the train tracks",
    "a laptop",
    "an umbrella",
    "a skateboard",
]
PLACES = [
    "in the park",
    "on a sunny day",
    "at night",
    "near the water",
    "in a field",
    "down the road",
    "in front of a store",
    "at the airport",
    "on the sidewalk",
    "inside a room",
    "by the ocean",
    "",
]
ENDINGS = [".", "", " .", "!", "?", "...", "\u2026", " !", ".", ".", "?!", ". ", "  "]

# Pieces inserted at random word boundaries: each names what it exercises.
PIECES = [
    # clitics and possessives
    "can't",
    "don't",
    "won't",
    "isn't",
    "it's",
    "they're",
    "we'll",
    "she'd",
    "I've",
    "I'm",
    "you'd",
    "dog's",
    "dogs'",
    "James's",
    "the boys'",
    "children's",
    "CAN'T",
    "Don\u2019t",
    "it\u2019s",
    "y'all",
    "o'clock",
    "O'Neil",
    "rock 'n' roll",
    "'90s",
    "'tis",
    "'Twas",
    "cannot",
    "gonna",
    "wanna",
    "gimme",
    "ain't",
    "shouldn't've",
    "Ma'am",
    "d'Artagnan",
    "l'homme",
    "Dunkin'",
    "somethin'",
    "c'mon",
    "'em",
    # hyphens and dashes
    "well-known",
    "-",
    "--",
    "---",
    "\u2014",
    "\u2013",
    "x-ray",
    "e-mail",
    "anti-",
    "pro-war",
    "self-driving",
    "-5",
    "two - three",
    "co-op",
    "up-to-date",
    "\u2010",
    "\u2011",
    "_",
    "__init__",
    # abbreviations
    "U.S.",
    "U.S",
    "U.K.",
    "Mr.",
    "Mrs.",
    "Dr.",
    "St.",
    "a.m.",
    "p.m.",
    "e.g.",
    "i.e.",
    "etc.",
    "vs.",
    "Inc.",
    "Corp.",
    "Jan.",
    "Calif.",
    "No.",
    "fig. 3",
    "ca. 1900",
    "Ltd.",
    "Jr.",
    "Ph.D.",
    "a.k.a.",
    "I.",
    "A.",
    "Co. Ltd",
    "Pty. Ltd",
    "Mass.",
    "Sept.",
    "approx.",
    "Mt.",
    "Ave.",
    "vs",
    # numbers
    "3.5",
    "1,000",
    "10:30",
    "1/2",
    "3/4",
    "1 1/2",
    "12/25/2020",
    "2020",
    "-3.2",
    "+7",
    "1.2.3",
    "555-1234",
    "(555) 123-4567",
    "10 1/2",
    "\u00bd",
    "\u00bc",
    "\u2153",
    "\u215b",
    "2\u00b3",
    "x\u00b2",
    "\u2075",
    "7%",
    "50 %",
    "#1",
    "No. 5",
    "3rd",
    "21st",
    "1980s",
    "4x4",
    "10am",
    # quotes
    '"hello"',
    "'hi'",
    "\u201cquoted\u201d",
    "\u2018single\u2019",
    "\u00abguillemets\u00bb",
    "\u201elow\u201c",
    "``latex''",
    '"',
    "'",
    "\u201c",
    "\u201d",
    "\u2039a\u203a",
    "&quot;x&quot;",
    "\u201a",
    "\u201f",
    # brackets
    "(red)",
    "[sic]",
    "{braces}",
    "( two )",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":)",
    ";-)",
    ":(",
    ":D",
    "^_^",
    "(-_-)",
    "<3",
    # slashes and asterisks
    "and/or",
    "w/",
    "24/7",
    "a/b/c",
    "/",
    "\\",
    "*",
    "**",
    "***",
    "\\*",
    # ampersands and entities
    "&",
    "&amp;",
    "AT&T",
    "R&D",
    "S&P",
    "Q&A",
    "&lt;",
    "&gt;",
    "&nbsp;",
    "&eacute;",
    "caf&eacute;",
    "&#8220;",
    "&mdash;",
    "&apos;",
    "<b>",
    "</b>",
    "<br/>",
    "<a href='x'>",
    "< >",
    "<<",
    ">>",
    # ellipses
    "...",
    "\u2026",
    ". . .",
    "....",
    "wait...",
    "so\u2026",
    # urls, e-mails, handles
    "http://example.com/a.jpg",
    "https://www.coco.org.",
    "www.example.com",
    "foo.com",
    "a@b.com",
    "<me@x.org>",
    "@user",
    "#tag",
    "#1",
    "file.txt",
    "photo.JPG",
    # currency, degrees, times, symbols
    "$5",
    "$ 5",
    "US$5",
    "\u00a35",
    "\u20ac10",
    "\u00a5100",
    "\u00a2",
    "\u20b9",
    "30\u00b0",
    "30 \u00b0C",
    "+",
    "=",
    "~",
    "^",
    "|",
    "\u00a9",
    "\u00ae",
    "\u2122",
    "\u00b1",
    "\u00d7",
    "\u00f7",
    "\u2192",
    "12:00",
    "5 p.m.",
    "noon",
    "\u00a7",
    "\u00b6",
    "\u2022",
    "\u00b7",
    "c++",
    "C#",
    "f#",
    # accents and non-Latin scripts
    "caf\u00e9",
    "na\u00efve",
    "Se\u00f1or",
    "Stra\u00dfe",
    "Zo\u00eb",
    "cafe\u0301",
    "\u00c5ngstr\u00f6m",
    "\u03b1\u03b8\u03ae\u03bd\u03b1",
    "\u039f\u0394\u039f\u03a3",
    "\u043c\u043e\u0441\u043a\u0432\u0430",
    "\u041f\u0420\u0418\u0412\u0415\u0422",
    "\u0627\u0644\u0642\u0637",
    "\u05e9\u05dc\u05d5\u05dd",
    "\u0928\u092e\u0938\u094d\u0924\u0947",
    "\u0e41\u0e21\u0e27",
    "\u732b",
    "\u3053\u3093\u306b\u3061\u306f",
    "\uace0\uc591\uc774",
    "\u09ac\u09bf\u09a1\u09bc\u09be\u09b2",
    "\u0bb5\u0ba3\u0b95\u0bcd\u0b95\u0bae\u0bcd",
    "\u4e00\u53ea\u732b\u3002",
    "\u0623\u0647\u0644\u0627\u064b",
    "\u0130stanbul",
    "\u1ea0",
    "\u0131",
    # emoji and invisible characters
    "\U0001f600",
    "\U0001f436",
    "\u2764\ufe0f",
    "\U0001f44d\U0001f3fd",
    "\u200b",
    "\ufeff",
    "\u200e",
    "\u00ad",
    "soft\u00adhyphen",
    "\x7f",
    "\x00",
    "\x01",
    # spacing
    "\t",
    "  ",
    "\u00a0",
    "\u2003",
    "\u3000",
    " \t ",
]
# Pieces for end-to-end scoring: clitics, hyphens, numbers and quotes, none of which can give a token with
# a no-break space inside: a fraction after a number ("2020 1/2", "1 1/2") or a spaced phone number is ONE
# PTB token with U+00A0 for the space, which pycocoevalcap's BLEU and CIDEr split (str.split()) and its
# ROUGE-L does not (split(" ")), so no single token list reproduces all three there.
SCORING_PIECES = [
    "can't",
    "don't",
    "it's",
    "they're",
    "we'll",
    "she'd",
    "I've",
    "dog's",
    "dogs'",
    "James's",
    "cannot",
    "gonna",
    "well-known",
    "--",
    "\u2014",
    "x-ray",
    "self-driving",
    "-5",
    "3.5",
    "1,000",
    "10:30",
    "2020",
    "3rd",
    "7%",
    '"hello"',
    "'hi'",
    "\u201cquoted\u201d",
    "\u2018single\u2019",
    "(red)",
    "U.S.",
    "Mr.",
    "etc.",
    "a.m.",
    "...",
    "&",
    "$5",
]
SPACES = [" "] * 30 + ["  ", "\t", "\u00a0", "   ", "\u2002", "\u3000", " \t"]


def _base(rng: random.Random) -> list[str]:
    place = rng.choice(PLACES)
    words = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {place}".split()
    words[0] = words[0][:1].upper() + words[0][1:]
    return words


def caption(rng: random.Random) -> str:
    """One raw caption: a plain template caption about a third of the time, else mutated."""
    words = _base(rng)
    ending = rng.choice(ENDINGS)
    roll = rng.random()
    if roll < 0.3:
        return " ".join(words) + ending
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        words.insert(rng.randrange(len(words) + 1), rng.choice(PIECES))
    if rng.random() < 0.15:  # glue a piece to a neighbour: "bike." "(red" "dog,"
        index = rng.randrange(len(words))
        words[index] = words[index] + rng.choice([",", ".", ";", ":", "'", '"', ")", "!", "'s", "n't", "-"])
    if rng.random() < 0.08:
        index = rng.randrange(len(words))
        words[index] = rng.choice(['"', "(", "'", "[", "\u201c", "-"]) + words[index]
    text = "".join(word + rng.choice(SPACES) for word in words[:-1]) + words[-1] + ending
    if rng.random() < 0.08:
        text = text.upper()
    elif rng.random() < 0.1:
        text = text.lower()
    if rng.random() < 0.05:
        text = rng.choice([" ", "\t", "  "]) + text
    return text


def captions(n: int = 20_000, seed: int = 0) -> list[str]:
    """``n`` raw captions; a few are empty or blank, as in real result files."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.002:
            out.append(rng.choice(["", " ", "\t", "."]))
        else:
            out.append(caption(rng))
    return out


def images(n_images: int, *, references: int = 5, seed: int = 0, plain: float = 0.5, pieces=SCORING_PIECES):
    """``(candidates, refs)``: image id -> raw caption and -> ``references`` raw captions.

    Captions of one image share a template so that they overlap like real references. ``plain`` is
    the share of captions left unmutated (real COCO captions are mostly plain).
    """
    rng = random.Random(seed)
    candidates: dict[int, str] = {}
    refs: dict[int, list[str]] = {}
    for image in range(n_images):
        words = _base(rng)
        texts = []
        for _ in range(references + 1):
            variant = [rng.choice(OBJECTS).split()[-1] if rng.random() < 0.15 else word for word in words]
            if rng.random() >= plain:
                for _ in range(rng.choice([1, 2])):
                    variant.insert(rng.randrange(len(variant) + 1), rng.choice(pieces))
            texts.append(" ".join(variant) + rng.choice(ENDINGS))
        candidates[image] = texts[0]
        refs[image] = texts[1:]
    return candidates, refs

"""The demo's zero-shot and foil data, written by hand for its 17 photographs, in English, German,
Arabic and Japanese, as the files a manager would import (Babel-ImageNet's label JSON, a prompt CSV, a
labelled-image CSV, VALSE-format foil files). Plain Python.

Class ids are the demo's own (0-16), not ImageNet's. Arabic covers 12 of the 17 classes, to show a
partially translated label set (its accuracy is over its 12 classes, English's compared on the same).
The foils (12 per language, the same pairs in every language) span VALSE's phenomena; every pair
counts as validated (3 votes). With the demo's tiny random-weight model the numbers mean nothing.
"""

from __future__ import annotations

import csv
import io
import json

__all__ = ["CLASSES", "FOILS", "LANGUAGES", "demo_foil_files", "demo_zeroshot_files"]

LANGUAGES = ("en", "de", "ar", "ja")

# class id -> (photo key, {language: label}); Arabic leaves five classes out.
CLASSES: dict[int, tuple[str, dict[str, str]]] = {
    0: ("skimage-astronaut", {"en": "astronaut", "de": "Astronaut", "ar": "رائد فضاء", "ja": "宇宙飛行士"}),
    1: ("skimage-camera", {"en": "camera", "de": "Kamera", "ar": "كاميرا", "ja": "カメラ"}),
    2: ("skimage-chelsea", {"en": "cat", "de": "Katze", "ar": "قطة", "ja": "猫"}),
    3: ("skimage-clock", {"en": "clock", "de": "Uhr", "ar": "ساعة", "ja": "時計"}),
    4: (
        "skimage-coffee",
        {"en": "cup of coffee", "de": "Tasse Kaffee", "ar": "فنجان قهوة", "ja": "コーヒー"},
    ),
    5: ("skimage-coins", {"en": "coins", "de": "Münzen", "ar": "عملات معدنية", "ja": "硬貨"}),
    6: ("skimage-rocket", {"en": "rocket", "de": "Rakete", "ar": "صاروخ", "ja": "ロケット"}),
    7: (
        "skimage-motorcycle",
        {"en": "motorcycle", "de": "Motorrad", "ar": "دراجة نارية", "ja": "オートバイ"},
    ),
    8: ("skimage-hubble-deep-field", {"en": "galaxies", "de": "Galaxien", "ar": "مجرات", "ja": "銀河"}),
    9: ("skimage-retina", {"en": "retina", "de": "Netzhaut", "ja": "網膜"}),
    10: ("skimage-moon", {"en": "moon", "de": "Mond", "ar": "القمر", "ja": "月"}),
    11: (
        "skimage-brick",
        {"en": "brick wall", "de": "Ziegelmauer", "ar": "جدار من الطوب", "ja": "レンガの壁"},
    ),
    12: ("skimage-grass", {"en": "grass", "de": "Gras", "ar": "عشب", "ja": "草"}),
    13: ("skimage-gravel", {"en": "gravel", "de": "Kies", "ja": "砂利"}),
    14: (
        "skimage-ihc",
        {"en": "cells under a microscope", "de": "Zellen unter dem Mikroskop", "ja": "顕微鏡で見た細胞"},
    ),
    15: ("skimage-text", {"en": "text", "de": "Text", "ja": "文字"}),
    16: ("skimage-page", {"en": "printed page", "de": "gedruckte Seite", "ja": "印刷されたページ"}),
}

TEMPLATES = {"en": "a photo of a {}.", "de": "ein Foto: {}.", "ar": "صورة {}.", "ja": "{}の写真。"}

# (pair id, photo key, phenomenon, {language: (caption, foil)})
FOILS: tuple[tuple[str, str, str, dict[str, tuple[str, str]]], ...] = (
    ("1", "skimage-astronaut", "existence", {
        "en": ("There is a person in a spacesuit.", "There is no person in a spacesuit."),
        "de": ("Es gibt eine Person im Raumanzug.", "Es gibt keine Person im Raumanzug."),
        "ar": ("يوجد شخص يرتدي بدلة فضاء.", "لا يوجد شخص يرتدي بدلة فضاء."),
        "ja": ("宇宙服を着た人がいる。", "宇宙服を着た人はいない。"),
    }),
    ("2", "skimage-camera", "actions", {
        "en": ("A man looks through a camera.", "A man repairs a camera."),
        "de": ("Ein Mann schaut durch eine Kamera.", "Ein Mann repariert eine Kamera."),
        "ar": ("رجل ينظر من خلال كاميرا.", "رجل يصلح كاميرا."),
        "ja": ("男性がカメラをのぞいている。", "男性がカメラを修理している。"),
    }),
    ("3", "skimage-chelsea", "noun swap", {
        "en": ("A cat looks to the side.", "A dog looks to the side."),
        "de": ("Eine Katze schaut zur Seite.", "Ein Hund schaut zur Seite."),
        "ar": ("قطة تنظر إلى الجانب.", "كلب ينظر إلى الجانب."),
        "ja": ("猫が横を見ている。", "犬が横を見ている。"),
    }),
    ("4", "skimage-clock", "counting", {
        "en": ("One clock on a wall.", "Three clocks on a wall."),
        "de": ("Eine Uhr an einer Wand.", "Drei Uhren an einer Wand."),
        "ar": ("ساعة واحدة على جدار.", "ثلاث ساعات على جدار."),
        "ja": ("壁に時計が一つある。", "壁に時計が三つある。"),
    }),
    ("5", "skimage-coffee", "spatial relations", {
        "en": ("A cup of coffee on a saucer.", "A cup of coffee under a saucer."),
        "de": ("Eine Tasse Kaffee auf einer Untertasse.", "Eine Tasse Kaffee unter einer Untertasse."),
        "ar": ("فنجان قهوة على صحن.", "فنجان قهوة تحت صحن."),
        "ja": ("受け皿の上にコーヒーカップがある。", "受け皿の下にコーヒーカップがある。"),
    }),
    ("6", "skimage-coins", "plurality", {
        "en": ("Several coins on a table.", "A single coin on a table."),
        "de": ("Mehrere Münzen auf einem Tisch.", "Eine einzige Münze auf einem Tisch."),
        "ar": ("عدة عملات معدنية على طاولة.", "عملة معدنية واحدة على طاولة."),
        "ja": ("机の上に何枚かの硬貨がある。", "机の上に硬貨が一枚だけある。"),
    }),
    ("7", "skimage-rocket", "actions", {
        "en": ("A rocket stands on the launch pad.", "A rocket lands in the sea."),
        "de": ("Eine Rakete steht auf der Startrampe.", "Eine Rakete landet im Meer."),
        "ar": ("صاروخ يقف على منصة الإطلاق.", "صاروخ يهبط في البحر."),
        "ja": ("ロケットが発射台に立っている。", "ロケットが海に着水している。"),
    }),
    ("8", "skimage-motorcycle", "noun swap", {
        "en": ("A red motorcycle parked indoors.", "A red bicycle parked indoors."),
        "de": ("Ein rotes Motorrad steht in einer Halle.", "Ein rotes Fahrrad steht in einer Halle."),
        "ar": ("دراجة نارية حمراء متوقفة في الداخل.", "دراجة هوائية حمراء متوقفة في الداخل."),
        "ja": ("赤いオートバイが屋内に停めてある。", "赤い自転車が屋内に停めてある。"),
    }),
    ("9", "skimage-hubble-deep-field", "plurality", {
        "en": ("Many galaxies in the night sky.", "One galaxy in the night sky."),
        "de": ("Viele Galaxien am Nachthimmel.", "Eine Galaxie am Nachthimmel."),
        "ar": ("مجرات كثيرة في سماء الليل.", "مجرة واحدة في سماء الليل."),
        "ja": ("夜空にたくさんの銀河がある。", "夜空に銀河が一つある。"),
    }),
    ("10", "skimage-moon", "existence", {
        "en": ("There is a moon in the picture.", "There is no moon in the picture."),
        "de": ("Auf dem Bild ist ein Mond.", "Auf dem Bild ist kein Mond."),
        "ar": ("يوجد قمر في الصورة.", "لا يوجد قمر في الصورة."),
        "ja": ("写真に月が写っている。", "写真に月は写っていない。"),
    }),
    ("11", "skimage-brick", "noun swap", {
        "en": ("A wall of bricks.", "A wall of books."),
        "de": ("Eine Wand aus Ziegeln.", "Eine Wand aus Büchern."),
        "ar": ("جدار من الطوب.", "جدار من الكتب."),
        "ja": ("レンガの壁。", "本の壁。"),
    }),
    ("12", "skimage-page", "existence", {
        "en": ("A page of printed text.", "A blank page with no text."),
        "de": ("Eine Seite mit gedrucktem Text.", "Eine leere Seite ohne Text."),
        "ar": ("صفحة عليها نص مطبوع.", "صفحة فارغة بلا نص."),
        "ja": ("文字が印刷されたページ。", "文字のない白紙のページ。"),
    }),
)  # fmt: skip


def demo_zeroshot_files() -> dict[str, tuple[str, bytes]]:
    """``{"labels", "templates", "images"}`` -> (file name, content) in the formats the check imports."""
    labels = {
        code: [
            [class_id for class_id, (_, names) in CLASSES.items() if code in names],
            [names[code] for _, names in CLASSES.values() if code in names],
        ]
        for code in LANGUAGES
    }
    templates = io.StringIO()
    writer = csv.writer(templates, lineterminator="\n")
    writer.writerows([("language", "template"), *TEMPLATES.items()])
    images = "image,class_id\n" + "".join(f"{key},{class_id}\n" for class_id, (key, _) in CLASSES.items())
    return {
        "labels": ("demo_babel_labels.json", json.dumps(labels, ensure_ascii=False).encode()),
        "templates": ("demo_templates.csv", templates.getvalue().encode()),
        "images": ("demo_labelled_images.csv", images.encode()),
    }


def demo_foil_files() -> list[tuple[str, bytes, str]]:
    """One VALSE-format file per language: ``(file name, content, language)``."""
    return [
        (
            f"{code}_demo_foils.json",
            json.dumps(
                {
                    pair_id: {
                        "dataset": "captioneval demo",
                        "image_file": f"{key}.png",
                        "caption": texts[code][0],
                        "foil": texts[code][1],
                        "linguistic_phenomena": phenomenon,
                        "mturk": {"foil": 0, "caption": 3, "other": 0},
                    }
                    for pair_id, key, phenomenon, texts in FOILS
                },
                ensure_ascii=False,
            ).encode(),
            code,
        )
        for code in LANGUAGES
    ]

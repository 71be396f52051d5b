"""The simulated side-by-side set's text: captions of four simulated systems and two human-style
references per image, in German, Arabic and Japanese, for the 17 demo photographs (plain data).

Every caption was written for its photograph (``annotation.services.demo.PHOTOS`` has each one's
title and the English captions of the real demo systems) and carries a grade that says what it is,
which the simulated raters' model reads (:mod:`evaluation.demo.simulation`):

    A  accurate and specific       B  accurate but brief       C  vague, nothing wrong
    D  specific, with a wrong detail (a colour, an object, a place)       E  wrong: another picture

The systems differ in a controlled way, and not the same way in every language:

* ``sim-a`` writes detailed, accurate captions (A), but in Japanese six of them carry a wrong
  detail (D): there it is close to ``sim-b`` for people, while its many matching characters still
  please the n-gram metrics;
* ``sim-b`` writes short, correct captions (B) in German and Japanese; its Arabic is poor, short
  and often wrong (D, E);
* ``sim-c`` is vague everywhere (C);
* ``sim-d`` is fluent and detailed but invents details in German (D, some E) and describes other
  pictures in Japanese (E, some D); its Arabic is good (B, some A).

The references are what a careful annotator writes: accurate, in their own words, never a copy of
a system's caption.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CAPTIONS", "GRADES", "SIM_SYSTEMS", "PhotoCaptions", "SimSystem"]

GRADES: dict[str, str] = {
    "A": "accurate and specific",
    "B": "accurate but brief",
    "C": "vague",
    "D": "specific, with a wrong detail",
    "E": "wrong (describes another picture)",
}


@dataclass(frozen=True)
class SimSystem:
    name: str
    description: str


SIM_SYSTEMS: tuple[SimSystem, ...] = (
    SimSystem(
        "sim-a",
        "Simulated system for the demo: detailed, accurate captions (some wrong details in Japanese).",
    ),
    SimSystem(
        "sim-b", "Simulated system for the demo: short, correct captions (poor and often wrong in Arabic)."
    ),
    SimSystem("sim-c", "Simulated system for the demo: vague captions that say little."),
    SimSystem("sim-d", "Simulated system for the demo: fluent but invents details (good in Arabic)."),
)


@dataclass(frozen=True)
class PhotoCaptions:
    """One photograph in one language: two references, and per system (grade, caption)."""

    references: tuple[str, str]
    systems: dict[str, tuple[str, str]]


def _photo(
    references: tuple[str, str],
    a: tuple[str, str],
    b: tuple[str, str],
    c: tuple[str, str],
    d: tuple[str, str],
):
    return PhotoCaptions(references, {"sim-a": a, "sim-b": b, "sim-c": c, "sim-d": d})


GERMAN: dict[str, PhotoCaptions] = {
    "skimage-astronaut": _photo(
        (
            "Eine Astronautin in orangefarbenem Raumanzug lächelt in die Kamera, hinter ihr die amerikanische Flagge.",
            "Porträt einer Frau mit kurzen Haaren im orangen Anzug, daneben ein Helm und ein Modell des Space Shuttles.",
        ),
        (
            "A",
            "Eine lächelnde Astronautin im orangefarbenen Raumanzug vor der amerikanischen Flagge, neben ihr ein schwarzer Helm.",
        ),
        ("B", "Eine Astronautin in einem orangen Anzug."),
        ("C", "Eine Person in einem Raum."),
        (
            "D",
            "Ein lächelnder Astronaut im weißen Raumanzug vor der amerikanischen Flagge, mit einem Helm in der Hand.",
        ),
    ),
    "skimage-camera": _photo(
        (
            "Schwarzweißfoto eines Mannes, der auf einer Wiese durch eine Kamera auf einem Stativ schaut.",
            "Ein Fotograf im dunklen Mantel steht mit seiner Kamera auf einer Rasenfläche, im Hintergrund Gebäude.",
        ),
        (
            "A",
            "Ein Mann im dunklen Mantel blickt auf einer Wiese durch eine Kamera auf einem Stativ, schwarzweiß.",
        ),
        ("B", "Ein Mann mit einer Kamera."),
        ("C", "Ein Foto von draußen."),
        ("D", "Eine Frau im hellen Mantel fotografiert mit einer Kamera auf einem Stativ einen Strand."),
    ),
    "skimage-chelsea": _photo(
        (
            "Nahaufnahme einer getigerten Katze mit grünen Augen und weißen Schnurrhaaren.",
            "Das Gesicht einer braun getigerten Katze, die aufmerksam zur Seite schaut.",
        ),
        (
            "A",
            "Nahaufnahme einer getigerten Katze mit grünen Augen, rosa Nase und langen weißen Schnurrhaaren.",
        ),
        ("B", "Eine getigerte Katze."),
        ("C", "Ein Tier."),
        ("D", "Eine schwarze Katze mit blauen Augen liegt auf einem Sofa."),
    ),
    "skimage-clock": _photo(
        (
            "Eine verwackelte Schwarzweißaufnahme einer runden Wanduhr.",
            "Eine weiße Uhr an einer Wand, durch Bewegung unscharf.",
        ),
        (
            "A",
            "Eine runde weiße Wanduhr an einer grauen Wand, durch die Bewegung der Kamera seitlich verwischt.",
        ),
        ("B", "Eine unscharfe Uhr."),
        ("C", "Ein verschwommenes Bild."),
        ("D", "Eine scharfe Aufnahme einer eckigen Uhr auf einem Tisch."),
    ),
    "skimage-coffee": _photo(
        (
            "Eine rote Espressotasse mit Untertasse und Löffel auf einem Holztisch.",
            "Ein Espresso in einer roten Tasse, daneben ein kleiner Löffel.",
        ),
        (
            "A",
            "Ein Espresso in einer roten Tasse auf einer roten Untertasse mit einem silbernen Löffel, auf einem Holztisch.",
        ),
        ("B", "Eine Tasse Kaffee."),
        ("C", "Etwas auf einem Tisch."),
        ("D", "Ein Glas Tee mit Zitrone auf einem roten Tisch."),
    ),
    "skimage-coins": _photo(
        (
            "Antike Münzen, in Reihen auf grauem Grund angeordnet, schwarzweiß.",
            "Viele alte Münzen mit Köpfen im Profil, in einem Raster ausgelegt.",
        ),
        (
            "A",
            "Schwarzweißfoto antiker Münzen in mehreren Reihen auf grauem Hintergrund, viele mit einem Kopf im Profil.",
        ),
        ("B", "Alte Münzen."),
        ("C", "Einige runde Gegenstände."),
        ("D", "Goldene moderne Euromünzen, in einem Haufen auf einem Tisch."),
    ),
    "skimage-rocket": _photo(
        (
            "Eine weiße Rakete auf der Startrampe in der Abenddämmerung.",
            "Eine Falcon-9-Rakete zwischen Stahltürmen, unten helle Scheinwerfer.",
        ),
        (
            "A",
            "Eine weiße Falcon-9-Rakete steht in der Dämmerung auf der Startrampe zwischen hohen Stahltürmen.",
        ),
        ("B", "Eine Rakete auf der Startrampe."),
        ("C", "Ein hohes Gebäude am Abend."),
        ("D", "Eine Rakete hebt am Mittag mit einer großen Rauchwolke ab."),
    ),
    "skimage-motorcycle": _photo(
        (
            "Ein rotes Motorrad steht in einer Garage vor Regalen mit Kartons.",
            "Eine rote Yamaha mit schwarzem Sitz, im Hintergrund Metallregale und eine Holzbank.",
        ),
        (
            "A",
            "Ein rotes Yamaha-Motorrad mit schwarzem Sitz steht in einer Garage vor Regalen voller Kartons.",
        ),
        ("B", "Ein rotes Motorrad."),
        ("C", "Ein Fahrzeug in einem Raum."),
        ("D", "Ein blaues Motorrad fährt auf einer Landstraße."),
    ),
    "skimage-hubble-deep-field": _photo(
        (
            "Unzählige ferne Galaxien in verschiedenen Farben vor dem schwarzen Weltraum.",
            "Eine Aufnahme des tiefen Weltraums mit vielen kleinen Galaxien, Spiralen und Flecken.",
        ),
        ("A", "Tausende ferne Galaxien in Weiß, Orange und Blau, verstreut über den schwarzen Weltraum."),
        ("B", "Viele Galaxien im Weltraum."),
        ("C", "Ein dunkles Bild mit Punkten."),
        ("E", "Ein Nachthimmel über einer Stadt mit dem Vollmond."),
    ),
    "skimage-retina": _photo(
        (
            "Eine Aufnahme des Augenhintergrunds mit roten Blutgefäßen in einem schwarzen Kreis.",
            "Die orangefarbene Netzhaut eines Auges mit hellem Sehnervkopf und verzweigten Adern.",
        ),
        (
            "A",
            "Ein Foto des Augenhintergrunds: orangerote Netzhaut mit verzweigten Blutgefäßen und hellem Sehnervkopf in einem schwarzen Kreis.",
        ),
        ("B", "Eine Netzhaut."),
        ("C", "Ein roter Kreis."),
        ("D", "Ein Foto des Planeten Mars mit Flüssen, in einem schwarzen Kreis."),
    ),
    "skimage-moon": _photo(
        (
            "Die graue Oberfläche des Mondes mit vielen Kratern, schwarzweiß.",
            "Nahaufnahme der Mondoberfläche mit kleinen Kratern und dunklen Flecken.",
        ),
        (
            "A",
            "Schwarzweiße Nahaufnahme der Mondoberfläche mit vielen kleinen Kratern und einigen dunklen Flecken.",
        ),
        ("B", "Die Oberfläche des Mondes."),
        ("C", "Eine graue Fläche."),
        ("D", "Die rote Oberfläche des Mars mit großen Bergen."),
    ),
    "skimage-brick": _photo(
        (
            "Eine Ziegelmauer in Schwarzweiß, schräg fotografiert.",
            "Lange, schmale Backsteine in versetzten Reihen.",
        ),
        ("A", "Schräg fotografierte Mauer aus langen, schmalen Ziegeln in versetzten Reihen, schwarzweiß."),
        ("B", "Eine Ziegelmauer."),
        ("C", "Eine Wand."),
        ("D", "Eine bunte Mauer aus runden Steinen mit einem Fenster."),
    ),
    "skimage-grass": _photo(
        (
            "Nahaufnahme von Gras mit dünnen Halmen, schwarzweiß.",
            "Ein Stück Rasen mit feinen Grashalmen und ein paar Kleeblättern.",
        ),
        ("A", "Schwarzweiße Nahaufnahme von Rasen mit dünnen Halmen und einigen kleinen Kleeblättern."),
        ("B", "Gras."),
        ("C", "Pflanzen."),
        ("D", "Ein grünes Weizenfeld unter blauem Himmel."),
    ),
    "skimage-gravel": _photo(
        (
            "Kies von oben fotografiert, schwarzweiß.",
            "Viele kantige kleine Steine dicht beieinander.",
        ),
        ("A", "Schwarzweiße Aufnahme von scharfkantigem Kies, von oben gesehen."),
        ("B", "Kies."),
        ("C", "Viele kleine Dinge."),
        ("D", "Runde bunte Kieselsteine in einem Bach."),
    ),
    "skimage-ihc": _photo(
        (
            "Mikroskopbild von Gewebe mit braun gefärbten Drüsen und blauen Zellkernen.",
            "Ein gefärbter Gewebeschnitt unter dem Mikroskop, braun und blau.",
        ),
        (
            "A",
            "Mikroskopaufnahme von gefärbtem Darmgewebe: braun gefärbte Drüsen, umgeben von hellem Gewebe mit blauen Zellkernen.",
        ),
        ("B", "Gewebe unter dem Mikroskop."),
        ("C", "Ein braunes und blaues Muster."),
        ("E", "Eine Satellitenaufnahme von Feldern und Flüssen."),
    ),
    "skimage-text": _photo(
        (
            "Handgeschriebene mathematische Formeln auf liniertem Papier, schräg fotografiert.",
            "Eine Schwarzweißaufnahme eines Blatts mit handschriftlichen Gleichungen.",
        ),
        ("A", "Schräge Schwarzweißaufnahme handgeschriebener mathematischer Formeln auf liniertem Papier."),
        ("B", "Handgeschriebene Formeln."),
        ("C", "Ein Blatt Papier."),
        ("D", "Eine gedruckte Seite eines Romans mit Bildern."),
    ),
    "skimage-page": _photo(
        (
            "Eine gedruckte Seite mit der Überschrift „Region-based segmentation“ und einer Zeile Code.",
            "Foto eines ungleichmäßig beleuchteten Dokuments mit Text und Python-Code.",
        ),
        (
            "A",
            "Foto einer gedruckten Seite mit der Überschrift „Region-based segmentation“, einem Absatz Text und einer Zeile Python-Code.",
        ),
        ("B", "Eine gedruckte Seite."),
        ("C", "Ein Dokument."),
        ("E", "Eine handgeschriebene Einkaufsliste auf einem Zettel."),
    ),
}

ARABIC: dict[str, PhotoCaptions] = {
    "skimage-astronaut": _photo(
        (
            "رائدة فضاء تبتسم وهي ترتدي بدلة فضاء برتقالية أمام العلم الأمريكي.",
            "صورة لامرأة بشعر قصير في بدلة برتقالية وبجانبها خوذة ونموذج لمكوك فضاء.",
        ),
        ("A", "رائدة فضاء مبتسمة في بدلة برتقالية أمام العلم الأمريكي وبجانبها خوذة سوداء."),
        ("D", "رجل يرتدي سترة حمراء."),
        ("C", "شخص يقف في غرفة."),
        ("B", "رائدة فضاء ترتدي بدلة برتقالية وتبتسم أمام علم."),
    ),
    "skimage-camera": _photo(
        (
            "صورة بالأبيض والأسود لرجل ينظر عبر كاميرا على حامل ثلاثي في حديقة.",
            "مصور يرتدي معطفًا داكنًا يقف على العشب مع كاميرته وخلفه مبانٍ بعيدة.",
        ),
        ("A", "رجل بمعطف داكن ينظر من خلال كاميرا مثبتة على حامل ثلاثي فوق العشب، صورة بالأبيض والأسود."),
        ("D", "رجل يحمل هاتفًا في الشارع."),
        ("C", "صورة في الخارج."),
        ("B", "مصور يلتقط صورة بكاميرا على حامل في حديقة."),
    ),
    "skimage-chelsea": _photo(
        (
            "صورة مقربة لقطة مخططة بعيون خضراء وشوارب بيضاء.",
            "وجه قطة بنية مخططة تنظر بانتباه إلى الجانب.",
        ),
        ("A", "صورة مقربة لوجه قطة مخططة ذات عيون خضراء وأنف وردي وشوارب بيضاء طويلة."),
        ("E", "كلب صغير."),
        ("C", "حيوان."),
        ("B", "قطة مخططة بعيون خضراء تنظر إلى الكاميرا."),
    ),
    "skimage-clock": _photo(
        (
            "صورة مهتزة بالأبيض والأسود لساعة حائط دائرية.",
            "ساعة بيضاء معلقة على الحائط تبدو ضبابية بسبب الحركة.",
        ),
        ("A", "ساعة حائط بيضاء مستديرة على جدار رمادي، تبدو مطموسة بسبب حركة الكاميرا."),
        ("E", "طبق أبيض."),
        ("C", "صورة ضبابية."),
        ("B", "ساعة حائط دائرية ضبابية بالأبيض والأسود."),
    ),
    "skimage-coffee": _photo(
        (
            "فنجان إسبريسو أحمر مع صحن وملعقة على طاولة خشبية.",
            "قهوة في فنجان أحمر وبجانبها ملعقة صغيرة.",
        ),
        ("A", "فنجان إسبريسو أحمر على صحن أحمر مع ملعقة فضية صغيرة فوق طاولة خشبية."),
        ("D", "كوب شاي أخضر."),
        ("C", "شيء على طاولة."),
        ("A", "فنجان قهوة أحمر على صحنه مع ملعقة صغيرة فوق طاولة خشبية."),
    ),
    "skimage-coins": _photo(
        (
            "عملات معدنية قديمة مرتبة في صفوف على خلفية رمادية، بالأبيض والأسود.",
            "مجموعة من العملات القديمة عليها رؤوس جانبية مصفوفة بانتظام.",
        ),
        (
            "A",
            "صورة بالأبيض والأسود لعملات معدنية قديمة في عدة صفوف على خلفية رمادية، معظمها يحمل رأسًا جانبيًا.",
        ),
        ("E", "أزرار على قماش."),
        ("C", "أشياء دائرية."),
        ("B", "عملات قديمة مرتبة في صفوف."),
    ),
    "skimage-rocket": _photo(
        (
            "صاروخ أبيض على منصة الإطلاق عند الغسق.",
            "صاروخ فالكون 9 بين أبراج فولاذية وأضواء ساطعة في الأسفل.",
        ),
        ("A", "صاروخ فالكون 9 أبيض يقف على منصة الإطلاق عند الغسق بين أبراج فولاذية عالية."),
        ("D", "برج مضاء في مدينة."),
        ("C", "مبنى طويل في المساء."),
        ("B", "صاروخ أبيض على منصة الإطلاق في المساء."),
    ),
    "skimage-motorcycle": _photo(
        (
            "دراجة نارية حمراء متوقفة في مرآب أمام رفوف عليها صناديق.",
            "دراجة ياماها حمراء بمقعد أسود، وخلفها رفوف معدنية ومقعد خشبي.",
        ),
        ("A", "دراجة نارية حمراء من نوع ياماها بمقعد أسود متوقفة في مرآب أمام رفوف مليئة بالصناديق."),
        ("D", "دراجة حمراء في الشارع."),
        ("C", "مركبة في غرفة."),
        ("B", "دراجة نارية حمراء في مرآب أمام رفوف."),
    ),
    "skimage-hubble-deep-field": _photo(
        (
            "عدد لا يحصى من المجرات البعيدة بألوان مختلفة على خلفية سوداء.",
            "صورة للفضاء العميق تظهر مجرات صغيرة كثيرة، حلزونية وبقعًا صغيرة.",
        ),
        ("A", "آلاف المجرات البعيدة بالأبيض والبرتقالي والأزرق، منتشرة في سواد الفضاء العميق."),
        ("D", "سماء الليل مليئة بالنجوم."),
        ("C", "صورة مظلمة فيها نقاط."),
        ("B", "مجرات كثيرة ملونة في الفضاء."),
    ),
    "skimage-retina": _photo(
        (
            "صورة لقاع العين تظهر أوعية دموية حمراء داخل دائرة سوداء.",
            "شبكية عين برتقالية مع قرص بصري فاتح وأوعية متفرعة.",
        ),
        (
            "A",
            "صورة لقاع عين سليمة: شبكية برتقالية حمراء تتفرع فيها الأوعية الدموية من القرص البصري الفاتح داخل دائرة سوداء.",
        ),
        ("D", "كرة حمراء عليها خطوط."),
        ("C", "دائرة حمراء."),
        ("B", "صورة لشبكية العين مع أوعية دموية."),
    ),
    "skimage-moon": _photo(
        (
            "سطح القمر الرمادي مع كثير من الفوهات، بالأبيض والأسود.",
            "صورة مقربة لسطح القمر فيها فوهات صغيرة وبقع داكنة.",
        ),
        ("A", "صورة مقربة بالأبيض والأسود لسطح القمر الرمادي المليء بفوهات صغيرة وبعض البقع الداكنة."),
        ("E", "جدار إسمنتي رمادي."),
        ("C", "سطح رمادي."),
        ("B", "سطح القمر مع فوهات."),
    ),
    "skimage-brick": _photo(
        (
            "جدار من الطوب بالأبيض والأسود مصور بزاوية مائلة.",
            "طوب طويل وضيق في صفوف متعاقبة.",
        ),
        ("A", "جدار من طوب طويل وضيق في صفوف متعاقبة، مصور بزاوية مائلة بالأبيض والأسود."),
        ("D", "أرضية من البلاط."),
        ("C", "جدار."),
        ("B", "جدار من الطوب بزاوية مائلة."),
    ),
    "skimage-grass": _photo(
        (
            "صورة مقربة لعشب بأوراق رفيعة، بالأبيض والأسود.",
            "قطعة من العشب بسيقان دقيقة وبعض أوراق البرسيم.",
        ),
        ("A", "صورة مقربة بالأبيض والأسود لعشب بسيقان رفيعة وبعض أوراق البرسيم الصغيرة."),
        ("D", "كومة من القش."),
        ("C", "نباتات."),
        ("B", "عشب كثيف بسيقان رفيعة."),
    ),
    "skimage-gravel": _photo(
        (
            "حصى مصور من الأعلى بالأبيض والأسود.",
            "حجارة صغيرة كثيرة ذات حواف حادة متراصة.",
        ),
        ("A", "صورة بالأبيض والأسود لطبقة من الحصى ذي الحواف الحادة من الأعلى."),
        ("B", "حجارة صغيرة كثيرة."),
        ("C", "أشياء صغيرة كثيرة."),
        ("B", "حصى حاد الحواف من الأعلى."),
    ),
    "skimage-ihc": _photo(
        (
            "صورة مجهرية لنسيج فيه غدد مصبوغة باللون البني ونوى زرقاء.",
            "مقطع نسيجي مصبوغ تحت المجهر باللونين البني والأزرق.",
        ),
        ("A", "صورة مجهرية لنسيج قولون مصبوغ: غدد من خلايا بنية متراصة يحيط بها نسيج فاتح بنوى زرقاء صغيرة."),
        ("D", "لوحة تجريدية بالبني والأزرق."),
        ("C", "نمط بني وأزرق."),
        ("B", "نسيج مصبوغ تحت المجهر بخلايا بنية."),
    ),
    "skimage-text": _photo(
        (
            "معادلات رياضية مكتوبة بخط اليد على ورق مسطر، مصورة بزاوية مائلة.",
            "صورة بالأبيض والأسود لورقة عليها معادلات مكتوبة باليد.",
        ),
        ("A", "صورة مائلة بالأبيض والأسود لمعادلات رياضية مكتوبة بخط اليد على ورق مسطر."),
        ("D", "صفحة من كتاب مطبوع."),
        ("C", "ورقة."),
        ("B", "معادلات مكتوبة بخط اليد على ورقة."),
    ),
    "skimage-page": _photo(
        (
            "صفحة مطبوعة بعنوان «Region-based segmentation» وسطر من الشيفرة.",
            "صورة لوثيقة بإضاءة غير متساوية فيها نص وشيفرة بايثون.",
        ),
        ("A", "صورة لصفحة مطبوعة بعنوان «Region-based segmentation» مع فقرة نصية وسطر من شيفرة بايثون."),
        ("B", "وثيقة فيها كتابة."),
        ("C", "مستند."),
        ("B", "صفحة مطبوعة فيها نص وشيفرة برمجية."),
    ),
}

JAPANESE: dict[str, PhotoCaptions] = {
    "skimage-astronaut": _photo(
        (
            "オレンジ色の宇宙服を着た女性宇宙飛行士が星条旗の前で微笑んでいる。",
            "短い髪の女性がオレンジのスーツを着て、ヘルメットとスペースシャトルの模型の横にいる。",
        ),
        ("D", "オレンジ色の宇宙服を着た男性の宇宙飛行士が、アメリカの国旗の前で笑顔を見せている。"),
        ("B", "宇宙服を着た女性。"),
        ("C", "部屋にいる人。"),
        ("E", "白い服を着た男性が車の前に立っている。"),
    ),
    "skimage-camera": _photo(
        (
            "芝生の上で三脚に載せたカメラをのぞく男性の白黒写真。",
            "黒いコートを着たカメラマンが芝生に立ち、遠くに建物が見える。",
        ),
        ("A", "黒いコートの男性が芝生の上で三脚のカメラをのぞいている白黒写真。"),
        ("B", "カメラを構える男性。"),
        ("C", "屋外の写真。"),
        ("E", "海辺で犬と遊ぶ子ども。"),
    ),
    "skimage-chelsea": _photo(
        (
            "緑色の目と白いひげを持つトラ猫の顔のアップ。",
            "茶色いしま模様の猫がじっと横を見ている。",
        ),
        ("A", "緑の目とピンクの鼻をしたトラ猫の顔のクローズアップ。"),
        ("B", "トラ猫の顔。"),
        ("C", "動物の写真。"),
        ("E", "黒い犬がソファで寝ている。"),
    ),
    "skimage-clock": _photo(
        (
            "手ぶれした丸い壁掛け時計の白黒写真。",
            "壁に掛かった白い時計が動きでぼやけている。",
        ),
        ("A", "灰色の壁に掛かった丸い白い時計が、カメラの動きで横にぶれている。"),
        ("B", "ぼやけた時計。"),
        ("C", "ぼやけた写真。"),
        ("E", "テーブルの上の白いお皿。"),
    ),
    "skimage-coffee": _photo(
        (
            "木のテーブルに置かれた赤いエスプレッソカップとソーサーとスプーン。",
            "赤いカップに入ったエスプレッソと小さなスプーン。",
        ),
        ("D", "木のテーブルの上に、赤いソーサーと金のスプーンを添えた白いカップのエスプレッソ。"),
        ("B", "赤いカップのコーヒー。"),
        ("C", "テーブルの上の物。"),
        ("D", "緑のコップに入ったお茶。"),
    ),
    "skimage-coins": _photo(
        (
            "灰色の背景に何列も並べられた古代の硬貨の白黒写真。",
            "横顔が刻まれた古いコインがたくさん整然と並んでいる。",
        ),
        ("A", "灰色の背景に並べられた古代の硬貨の白黒写真で、多くに横顔が刻まれている。"),
        ("B", "古いコイン。"),
        ("C", "丸い物がたくさん。"),
        ("E", "机の上に積まれた金色のボタン。"),
    ),
    "skimage-rocket": _photo(
        (
            "夕暮れの発射台に立つ白いロケット。",
            "鉄塔の間に立つファルコン9ロケットと、下を照らす明るいライト。",
        ),
        ("D", "夜明けの発射台から白いファルコン9ロケットが煙を上げて打ち上げられている。"),
        ("B", "発射台のロケット。"),
        ("C", "夕方の高い建物。"),
        ("E", "昼間に煙を上げて飛び立つ飛行機。"),
    ),
    "skimage-motorcycle": _photo(
        (
            "段ボール箱の並ぶ棚の前、ガレージに止められた赤いバイク。",
            "黒いシートの赤いヤマハのバイクと、後ろの金属棚と木のベンチ。",
        ),
        ("D", "ガレージの中、段ボール箱が並ぶ棚の前に止めてある赤いホンダのスクーター。"),
        ("B", "赤いバイク。"),
        ("C", "部屋の中の乗り物。"),
        ("E", "田舎道を走る青い自転車。"),
    ),
    "skimage-hubble-deep-field": _photo(
        (
            "黒い宇宙に散らばる色とりどりの無数の遠い銀河。",
            "渦巻きや小さなしみのような銀河がたくさん写った深宇宙の画像。",
        ),
        ("A", "白やオレンジや青の何千もの遠い銀河が、真っ黒な宇宙に散らばっている。"),
        ("B", "たくさんの銀河。"),
        ("C", "点のある暗い画像。"),
        ("E", "満月が浮かぶ都会の夜空。"),
    ),
    "skimage-retina": _photo(
        (
            "黒い円の中に赤い血管が写った眼底写真。",
            "明るい視神経乳頭から血管が枝分かれしているオレンジ色の網膜。",
        ),
        ("A", "眼底の写真で、オレンジがかった赤い網膜に明るい視神経乳頭から血管が枝分かれしている。"),
        ("B", "網膜の写真。"),
        ("C", "赤い丸。"),
        ("E", "川が流れる火星の写真。"),
    ),
    "skimage-moon": _photo(
        (
            "たくさんのクレーターがある灰色の月面の白黒写真。",
            "小さなクレーターと暗いしみが見える月の表面のアップ。",
        ),
        ("A", "小さなクレーターと暗い部分が点在する灰色の月面の白黒のクローズアップ。"),
        ("B", "月の表面。"),
        ("C", "灰色の面。"),
        ("D", "大きな山がある赤い火星の表面。"),
    ),
    "skimage-brick": _photo(
        (
            "斜めから撮ったレンガの壁の白黒写真。",
            "細長いレンガが互い違いに積まれている。",
        ),
        ("D", "赤いレンガが互い違いに積まれた壁を正面から撮ったカラー写真。"),
        ("B", "レンガの壁。"),
        ("C", "壁。"),
        ("D", "窓のある色とりどりの石の壁。"),
    ),
    "skimage-grass": _photo(
        (
            "細い葉の草のクローズアップの白黒写真。",
            "細かな草の葉と少しのクローバーが生えた芝生。",
        ),
        ("A", "細い葉と小さなクローバーが混じった芝生の白黒のクローズアップ。"),
        ("B", "草。"),
        ("C", "植物。"),
        ("E", "青空の下の麦畑。"),
    ),
    "skimage-gravel": _photo(
        (
            "上から撮った砂利の白黒写真。",
            "角ばった小石がぎっしり集まっている。",
        ),
        ("A", "上から見た角ばった砂利の層の白黒写真。"),
        ("B", "砂利。"),
        ("C", "小さな物がたくさん。"),
        ("D", "川の中の丸くてカラフルな小石。"),
    ),
    "skimage-ihc": _photo(
        (
            "茶色に染まった腺と青い細胞核が見える組織の顕微鏡画像。",
            "茶色と青に染色された組織切片の顕微鏡写真。",
        ),
        ("A", "染色した大腸組織の顕微鏡画像で、茶色に染まった細胞の腺を青い核の淡い組織が囲んでいる。"),
        ("B", "顕微鏡で見た組織。"),
        ("C", "茶色と青の模様。"),
        ("E", "畑と川を写した衛星写真。"),
    ),
    "skimage-text": _photo(
        (
            "罫線の入った紙に手書きされた数式を斜めから撮った写真。",
            "手書きの方程式が書かれた紙の白黒写真。",
        ),
        ("D", "罫線のある紙に鉛筆で書かれた英語の手紙を斜めから写した白黒写真。"),
        ("B", "手書きの数式。"),
        ("C", "紙。"),
        ("D", "絵の入った小説の印刷されたページ。"),
    ),
    "skimage-page": _photo(
        (
            "「Region-based segmentation」という見出しと一行のコードがある印刷されたページ。",
            "光が不均一に当たった、文章とPythonコードの書かれた書類の写真。",
        ),
        (
            "A",
            "「Region-based segmentation」という見出しと文章の段落、Pythonのコード一行が印刷されたページの写真。",
        ),
        ("B", "印刷されたページ。"),
        ("C", "書類。"),
        ("E", "紙に手書きされた買い物リスト。"),
    ),
}

# language code -> image key -> the photograph's references and system captions.
CAPTIONS: dict[str, dict[str, PhotoCaptions]] = {"de": GERMAN, "ar": ARABIC, "ja": JAPANESE}

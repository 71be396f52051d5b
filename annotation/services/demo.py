"""The embedded demo: real photographs, two captioning systems, three languages, accounts.

The photographs are the sample images that ship inside the scikit-image wheel (no
download): 17 real photographs, with the source and licence that scikit-image documents
for each. The English captions were written by looking at each picture: "demo-good" is
accurate and specific, "demo-weak" is vague or partly wrong, as a weaker model would be.
Both systems also have German captions (faithful translations of their English ones), for
an open side-by-side campaign in German: demo-weak (m1) against demo-good (m2), K = 3,
which the three German annotators can fill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import (
    Annotator,
    AnnotatorSkill,
    Campaign,
    CampaignKind,
    CampaignState,
    CaptioningSystem,
    SkillLevel,
    SystemCaption,
)
from annotation.services.campaigns import PROMPT_LANGUAGE, campaign_open, sxs_campaign_create
from annotation.services.images import image_store
from annotation.services.languages import language_ensure
from core.access import PROJECT_MANAGERS, RESEARCHERS, role_grant, roles_ensure
from core.errors import ValidationFailed

# Published on purpose: demo accounts only (load_demo refuses to run with DEBUG off).
DEMO_PASSWORD = "demo-pass-2026"  # noqa: S105
GOOD_SYSTEM = "demo-good"
WEAK_SYSTEM = "demo-weak"
BATCH_SIZE = 15
REPLICATION = 2
SXS_LANGUAGE = "de"
# Annotators see campaign names: no system name in it.
SXS_CAMPAIGN = "Demo: side by side in German"
SXS_BATCH_SIZE = 10
SXS_REPLICATION = 3
SXS_SEED = 2026

CC0 = "CC0 1.0 (public domain dedication)"
PUBLIC_DOMAIN = "Public domain"
NOT_STATED = "Not stated by scikit-image (sample image distributed with scikit-image)"


@dataclass(frozen=True)
class DemoPhoto:
    key: str
    filename: str  # inside skimage/data/ of the installed wheel
    good: str
    weak: str
    title: str
    author: str
    license: str
    source_url: str = ""
    place: dict = field(default_factory=dict)
    # The same two captions in German (translated faithfully, the weak one staying weak), so
    # the two systems can be compared side by side in German.
    good_de: str = ""
    weak_de: str = ""


PHOTOS: tuple[DemoPhoto, ...] = (
    DemoPhoto(
        key="skimage-astronaut",
        filename="astronaut.png",
        good=(
            "A smiling astronaut with short brown hair in an orange spacesuit, posing in front of "
            "an American flag and a model of the space shuttle, with a black helmet beside her."
        ),
        weak="A person in an orange jacket standing in a room.",
        good_de="Eine lächelnde Astronautin mit kurzen braunen Haaren in einem orangefarbenen Raumanzug posiert vor einer amerikanischen Flagge und einem Modell des Space Shuttles, neben ihr ein schwarzer Helm.",
        weak_de="Eine Person in einer orangefarbenen Jacke steht in einem Raum.",
        title="Astronaut Eileen Collins",
        author="NASA (NASA Great Images database)",
        license="No known copyright restrictions; released into the public domain",
        source_url="https://flic.kr/p/r9qvLn",
    ),
    DemoPhoto(
        key="skimage-camera",
        filename="camera.png",
        good=(
            "Black-and-white photo of a man in a dark coat looking through a camera on a tripod, "
            "standing on a wide lawn with buildings and a domed roof in the distance."
        ),
        weak="A photographer taking pictures of a city at night.",
        good_de="Schwarzweißfoto eines Mannes in dunklem Mantel, der durch eine Kamera auf einem Stativ blickt; er steht auf einer weiten Rasenfläche, in der Ferne Gebäude und ein Kuppeldach.",
        weak_de="Ein Fotograf fotografiert nachts eine Stadt.",
        title="Cameraman",
        author="Lav Varshney",
        license=CC0,
    ),
    DemoPhoto(
        key="skimage-chelsea",
        filename="chelsea.png",
        good="Close-up of the face of a tabby cat with green eyes, a pink nose and long white whiskers.",
        weak="A brown animal looking at the camera.",
        good_de="Nahaufnahme des Gesichts einer getigerten Katze mit grünen Augen, rosa Nase und langen weißen Schnurrhaaren.",
        weak_de="Ein braunes Tier schaut in die Kamera.",
        title="Chelsea the cat",
        author="Stefan van der Walt",
        license=CC0,
    ),
    DemoPhoto(
        key="skimage-clock",
        filename="clock_motion.png",
        good=(
            "A blurred black-and-white photo of a round white wall clock on a grey wall, "
            "smeared sideways because the camera moved."
        ),
        weak="A white plate on a grey table.",
        good_de="Ein unscharfes Schwarzweißfoto einer runden weißen Wanduhr an einer grauen Wand, seitlich verwischt, weil sich die Kamera bewegt hat.",
        weak_de="Ein weißer Teller auf einem grauen Tisch.",
        title="Motion-blurred clock",
        author="Stefan van der Walt",
        license=PUBLIC_DOMAIN + " (released by the photographer)",
    ),
    DemoPhoto(
        key="skimage-coffee",
        filename="coffee.png",
        good=(
            "An espresso in a red cup that is white inside, on a matching red saucer with a small "
            "silver spoon, on a worn wooden table."
        ),
        weak="A cup of tea on a table.",
        good_de="Ein Espresso in einer roten, innen weißen Tasse auf einer passenden roten Untertasse mit einem kleinen silbernen Löffel, auf einem abgenutzten Holztisch.",
        weak_de="Eine Tasse Tee auf einem Tisch.",
        title="Coffee cup (courtesy of Pikolo Espresso Bar)",
        author="Rachel Michetti",
        license=CC0,
    ),
    DemoPhoto(
        key="skimage-coins",
        filename="coins.png",
        good=(
            "Black-and-white photo of twenty-four ancient coins laid out in four rows on a grey "
            "background, most of them showing a head in profile."
        ),
        weak="Some buttons on a piece of cloth.",
        good_de="Schwarzweißfoto von vierundzwanzig antiken Münzen, in vier Reihen auf grauem Hintergrund ausgelegt; die meisten zeigen einen Kopf im Profil.",
        weak_de="Einige Knöpfe auf einem Stück Stoff.",
        title="Greek coins from Pompeii",
        author="Brooklyn Museum",
        license="No known copyright restrictions",
        source_url="https://www.brooklynmuseum.org/opencollection/archives/image/51611",
    ),
    DemoPhoto(
        key="skimage-rocket",
        filename="rocket.jpg",
        good=(
            "A white Falcon 9 rocket standing on its launch pad at dusk between tall steel lattice "
            "towers, with bright lights shining at the bottom of the picture."
        ),
        weak="A tall tower lit up at night in a city.",
        good_de="Eine weiße Falcon-9-Rakete steht in der Abenddämmerung auf ihrer Startrampe zwischen hohen Stahlgittertürmen, am unteren Bildrand leuchten helle Lichter.",
        weak_de="Ein hoher, beleuchteter Turm in einer Stadt bei Nacht.",
        title="Launch of DSCOVR on Falcon 9, Cape Canaveral",
        author="SpaceX",
        license=PUBLIC_DOMAIN + " (released by SpaceX)",
        source_url="https://www.flickr.com/photos/spacexphotos/16511594820/",
        place={
            "country": "United States",
            "region": "Florida",
            "continent": "North America",
            "latitude": 28.5619,
            "longitude": -80.5772,
        },
    ),
    DemoPhoto(
        key="skimage-motorcycle",
        filename="motorcycle_left.png",
        good=(
            "A red Yamaha motorcycle with a black seat parked on its stand in a garage, in front of "
            "metal shelves with cardboard boxes and a wooden bench."
        ),
        weak="A red scooter parked on the street.",
        good_de="Ein rotes Yamaha-Motorrad mit schwarzem Sitz steht aufgebockt in einer Garage, vor Metallregalen mit Kartons und einer Holzbank.",
        weak_de="Ein roter Motorroller parkt auf der Straße.",
        title="Motorcycle (Middlebury 2014 stereo dataset, left view)",
        author="N. Nesic, P. Westling, X. Wang, Y. Kitajima, G. Krathwohl, D. Scharstein (Middlebury College)",
        license="Middlebury 2014 stereo benchmark; licence not stated by scikit-image",
        source_url="https://vision.middlebury.edu/stereo/data/scenes2014/",
    ),
    DemoPhoto(
        key="skimage-hubble-deep-field",
        filename="hubble_deep_field.jpg",
        good=(
            "Thousands of distant galaxies, white, orange and blue, spirals and small smudges, "
            "scattered over the black of deep space."
        ),
        weak="A night sky full of stars.",
        good_de="Tausende ferne Galaxien, weiß, orange und blau, Spiralen und kleine Flecken, verstreut über das Schwarz des tiefen Weltraums.",
        weak_de="Ein Nachthimmel voller Sterne.",
        title="Hubble eXtreme Deep Field",
        author="NASA (Hubble Space Telescope)",
        license=PUBLIC_DOMAIN + " (NASA)",
        source_url="http://hubblesite.org/newscenter/archive/releases/2012/37/image/a/",
    ),
    DemoPhoto(
        key="skimage-retina",
        filename="retina.jpg",
        good=(
            "A photograph of the back of a healthy left eye: an orange-red retina with blood vessels "
            "branching out from the bright optic disc on the left, inside a black circle."
        ),
        weak="A red ball with lines drawn on it.",
        good_de="Eine Aufnahme des Augenhintergrunds eines gesunden linken Auges: eine orangerote Netzhaut mit Blutgefäßen, die sich von der hellen Papille links aus verzweigen, in einem schwarzen Kreis.",
        weak_de="Ein roter Ball, auf den Linien gezeichnet sind.",
        title="Fundus photograph of a normal left eye",
        author="Mikael Häggström",
        license=CC0,
        source_url="https://commons.wikimedia.org/wiki/File:Fundus_photograph_of_normal_left_eye.jpg",
    ),
    DemoPhoto(
        key="skimage-moon",
        filename="moon.png",
        good="Black-and-white close-up of the grey surface of the moon, dotted with small craters and a few dark patches.",
        weak="A grey concrete wall with some stains.",
        good_de="Schwarzweiße Nahaufnahme der grauen Mondoberfläche, übersät mit kleinen Kratern und einigen dunklen Flecken.",
        weak_de="Eine graue Betonwand mit einigen Flecken.",
        title="Surface of the moon",
        author="",
        license=NOT_STATED,
    ),
    DemoPhoto(
        key="skimage-brick",
        filename="brick.png",
        good="A black-and-white photo of a wall of long, narrow bricks in staggered rows, seen at an angle.",
        weak="A tiled floor.",
        good_de="Ein Schwarzweißfoto einer Mauer aus langen, schmalen Ziegeln in versetzten Reihen, schräg von der Seite gesehen.",
        weak_de="Ein gefliester Boden.",
        title="Brick wall (Bricks25)",
        author="CC0Textures",
        license=CC0,
        source_url="https://cc0textures.com/view.php?tex=Bricks25",
    ),
    DemoPhoto(
        key="skimage-grass",
        filename="grass.png",
        good="A black-and-white close-up of a patch of grass with thin blades and a few small clover leaves.",
        weak="A pile of hay.",
        good_de="Eine schwarzweiße Nahaufnahme eines Stücks Rasen mit dünnen Halmen und einigen kleinen Kleeblättern.",
        weak_de="Ein Haufen Heu.",
        title="Grass",
        author="linolafett (DeviantArt)",
        license=CC0,
        source_url="https://www.deviantart.com/linolafett/art/Grass-01-434853879",
    ),
    DemoPhoto(
        key="skimage-gravel",
        filename="gravel.png",
        good="A black-and-white close-up of a layer of sharp-edged gravel stones seen from above.",
        weak="Many small rocks.",
        good_de="Eine schwarzweiße Nahaufnahme einer Schicht scharfkantiger Kiessteine, von oben gesehen.",
        weak_de="Viele kleine Steine.",
        title="Gravel (Gravel04)",
        author="CC0Textures",
        license=CC0,
        source_url="https://cc0textures.com/view.php?tex=Gravel04",
    ),
    DemoPhoto(
        key="skimage-ihc",
        filename="ihc.png",
        good=(
            "A microscope image of stained colon tissue: glands of tightly packed, brown-stained cells "
            "surrounded by pale tissue with small blue nuclei."
        ),
        weak="A brown and blue abstract painting.",
        good_de="Ein Mikroskopbild von gefärbtem Dickdarmgewebe: Drüsen aus dicht gepackten, braun gefärbten Zellen, umgeben von blassem Gewebe mit kleinen blauen Zellkernen.",
        weak_de="Ein abstraktes Gemälde in Braun und Blau.",
        title="Immunohistochemical staining of colonic glands",
        author="Center for Microscopy And Molecular Imaging (CMMI)",
        license="No known copyright restrictions",
    ),
    DemoPhoto(
        key="skimage-text",
        filename="text.png",
        good="A black-and-white close-up, at a slant, of handwritten mathematical formulas on lined paper.",
        weak="A page of a printed book.",
        good_de="Eine schräge schwarzweiße Nahaufnahme handgeschriebener mathematischer Formeln auf liniertem Papier.",
        weak_de="Eine Seite eines gedruckten Buches.",
        title="Handwritten formulas (Wikipedia “Corner.png”)",
        author="Wikipedia",
        license="No known copyright restrictions; released into the public domain",
        source_url="https://en.wikipedia.org/wiki/File:Corner.png",
    ),
    DemoPhoto(
        key="skimage-page",
        filename="page.png",
        good=(
            "A photo of a printed page headed “Region-based segmentation”, with a paragraph of text "
            "and a line of Python code, lit unevenly."
        ),
        weak="A document with some writing.",
        good_de="Ein Foto einer gedruckten Seite mit der Überschrift „Region-based segmentation“, einem Textabsatz und einer Zeile Python-Code, ungleichmäßig beleuchtet.",
        weak_de="Ein Dokument mit etwas Schrift.",
        title="Scanned page",
        author="",
        license=NOT_STATED,
    ),
)

# Target languages: one right-to-left, one written without spaces (per-character tokens).
LANGUAGES = ("de", "ar", "ja")


@dataclass(frozen=True)
class DemoAccount:
    username: str
    role: str  # "annotator", "project manager", "researcher"
    languages: tuple[tuple[str, str], ...] = ()  # (code, level)


ACCOUNTS: tuple[DemoAccount, ...] = (
    DemoAccount("anna-de", "annotator", (("de", SkillLevel.NATIVE),)),
    DemoAccount("ben-de", "annotator", (("de", SkillLevel.FLUENT),)),
    # A third German speaker, so the side-by-side campaign can reach K = 3.
    DemoAccount("clara-de", "annotator", (("de", SkillLevel.NATIVE),)),
    # A fourth, so a verification campaign with K = 3 can be filled: nobody rates their own
    # caption, so a caption written by anna-de needs three raters among the other three.
    DemoAccount("dora-de", "annotator", (("de", SkillLevel.NATIVE),)),
    DemoAccount("omar-ar", "annotator", (("ar", SkillLevel.NATIVE),)),
    DemoAccount("layla-ar", "annotator", (("ar", SkillLevel.NATIVE),)),
    DemoAccount("yuki-ja", "annotator", (("ja", SkillLevel.NATIVE),)),
    DemoAccount("kenji-ja", "annotator", (("ja", SkillLevel.FLUENT),)),
    DemoAccount("manager", "project manager"),
    DemoAccount("researcher", "researcher"),
)


@dataclass
class DemoSummary:
    images: int = 0
    images_created: int = 0
    captions: int = 0
    captions_created: int = 0
    users_created: int = 0
    campaigns: list[tuple[str, str, str]] = field(default_factory=list)  # (name, language, state)
    notes: list[str] = field(default_factory=list)
    accounts: list[DemoAccount] = field(default_factory=list)
    password: str = DEMO_PASSWORD

    @property
    def changed(self) -> bool:
        return bool(self.images_created or self.captions_created or self.users_created)


def demo_photo_bytes(photo: DemoPhoto) -> bytes:
    """The photo's file as shipped inside the scikit-image wheel (no download)."""
    try:
        return resources.files("skimage").joinpath("data", photo.filename).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise ValidationFailed(
            f"The demo photo {photo.filename} is not available: install scikit-image (requirements.txt). ({exc})"
        ) from None


def _account_ensure(account: DemoAccount, summary: DemoSummary) -> None:
    User = get_user_model()
    user, created = User.objects.get_or_create(username=account.username)
    if created:
        # Only on creation: a password changed since is left alone.
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
        summary.users_created += 1
    if account.role == "project manager":
        role_grant(user=user, role=PROJECT_MANAGERS)
    elif account.role == "researcher":
        role_grant(user=user, role=RESEARCHERS)
    else:
        annotator, _ = Annotator.objects.get_or_create(user=user, defaults={"reads_english": True})
        for code, level in account.languages:
            AnnotatorSkill.objects.get_or_create(
                annotator=annotator, language=language_ensure(code=code), defaults={"level": level}
            )
    summary.accounts.append(account)


def demo_load() -> DemoSummary:
    """Load the demo: images, both systems' English (and German) captions, languages, accounts,
    one open caption campaign per language and an open side-by-side campaign in German.

    Idempotent: a second run finds everything in place and changes nothing (a campaign a
    project manager has closed stays closed; a changed password stays changed). Runs in
    one transaction. Raises ValidationFailed if scikit-image's sample photos are missing.
    """
    summary = DemoSummary()
    with transaction.atomic():
        roles_ensure()
        english = language_ensure(code=PROMPT_LANGUAGE)
        targets = [language_ensure(code=code) for code in LANGUAGES]
        sxs_language = targets[LANGUAGES.index(SXS_LANGUAGE)]
        good, _ = CaptioningSystem.objects.get_or_create(
            name=GOOD_SYSTEM, defaults={"description": "Demo system: accurate, specific captions."}
        )
        weak, _ = CaptioningSystem.objects.get_or_create(
            name=WEAK_SYSTEM, defaults={"description": "Demo system: vague or partly wrong captions."}
        )
        for photo in PHOTOS:
            image, created = image_store(
                key=photo.key,
                data=demo_photo_bytes(photo),
                name=photo.filename,
                title=photo.title,
                author=photo.author,
                license=photo.license,
                source_url=photo.source_url,
                **photo.place,
            )
            summary.images += 1
            summary.images_created += int(created)
            for system, language, text in (
                (good, english, photo.good),
                (weak, english, photo.weak),
                (good, sxs_language, photo.good_de),
                (weak, sxs_language, photo.weak_de),
            ):
                _, created = SystemCaption.objects.get_or_create(
                    system=system, image=image, language=language, defaults={"text": text}
                )
                summary.captions += 1
                summary.captions_created += int(created)

        for account in ACCOUNTS:
            _account_ensure(account, summary)

        batch_size = min(BATCH_SIZE, len(PHOTOS))
        for language in targets:
            campaign, created = Campaign.objects.get_or_create(
                name=f"Demo: captions in {language.name}",
                defaults={
                    "kind": CampaignKind.CAPTION,
                    "language": language,
                    "prompt_system": good,
                    "batch_size": batch_size,
                    "replication": REPLICATION,
                },
            )
            if created or campaign.state == CampaignState.DRAFT:
                campaign = campaign_open(campaign_id=campaign.pk)
            summary.campaigns.append((campaign.name, language.code, campaign.state))

        campaign = Campaign.objects.filter(name=SXS_CAMPAIGN).first()
        if campaign is None:
            campaign = sxs_campaign_create(
                name=SXS_CAMPAIGN,
                language_code=SXS_LANGUAGE,
                base_system=weak,
                test_system=good,
                seed=SXS_SEED,
                batch_size=SXS_BATCH_SIZE,
                replication=SXS_REPLICATION,
                controls_identical=1,
                controls_wrong_image=1,
            )
        if campaign.state == CampaignState.DRAFT:
            campaign = campaign_open(campaign_id=campaign.pk)
        summary.campaigns.append((campaign.name, SXS_LANGUAGE, campaign.state))
        speakers = ", ".join(
            a.username for a in ACCOUNTS if any(code == SXS_LANGUAGE for code, _ in a.languages)
        )
        summary.notes.append(
            f"“{SXS_CAMPAIGN}” compares {WEAK_SYSTEM} (m1) with {GOOD_SYSTEM} (m2), each pair judged by "
            f"{SXS_REPLICATION} annotators: log in as {speakers} in turn to fill it. A verification campaign is "
            "created by the manager in the admin (Campaigns › Add verification campaign) once a caption "
            "campaign has captions; nobody rates their own caption, so with K = 3 it takes all four."
        )
    return summary

"""The per-character tokenizer "character" became the scheme "char" (grapheme clusters), and
English ("en", "en-GB", ...) that still had the old default "whitespace" takes its new default,
"coco-ptb" (the COCO evaluation server's tokenisation).

Only the language setting changes; metric runs keep the params they recorded ("tokenizer":
"character"), so what an old run was computed with is still shown as it was.
"""

from django.db import migrations

RENAMED = {"character": "char"}


def forwards(apps, schema_editor):
    Language = apps.get_model("annotation", "Language")
    for old, new in RENAMED.items():
        Language.objects.filter(tokenizer=old).update(tokenizer=new)
    english = Language.objects.filter(tokenizer="whitespace").filter(code__iregex=r"^en(-|$)")
    english.update(tokenizer="coco-ptb")


def backwards(apps, schema_editor):
    Language = apps.get_model("annotation", "Language")
    for old, new in RENAMED.items():
        Language.objects.filter(tokenizer=new).update(tokenizer=old)
    # Schemes the old field did not know go back to its default.
    Language.objects.exclude(tokenizer__in=["whitespace", "character"]).update(tokenizer="whitespace")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0006_language_tokenisation_schemes")]

    operations = [migrations.RunPython(forwards, backwards)]

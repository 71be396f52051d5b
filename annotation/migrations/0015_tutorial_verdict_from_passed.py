"""Each stored tutorial result keeps the verdict its annotator was shown: passed stays passed, failed
stays failed (a verdict shown is never turned around, not by a migration either)."""

from django.db import migrations


def verdict_from_passed(apps, schema_editor):
    TutorialResult = apps.get_model("annotation", "TutorialResult")
    TutorialResult.objects.filter(passed=True).update(verdict="passed")
    TutorialResult.objects.filter(passed=False).update(verdict="failed")


def passed_from_verdict(apps, schema_editor):
    TutorialResult = apps.get_model("annotation", "TutorialResult")
    TutorialResult.objects.filter(verdict="passed").update(passed=True)
    # Back to a yes/no: a pending verdict had no work allowed, so it reads as not passed.
    TutorialResult.objects.exclude(verdict="passed").update(passed=False)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0014_tutorial_verdict_and_review_time"),
    ]

    operations = [
        migrations.RunPython(verdict_from_passed, passed_from_verdict),
    ]

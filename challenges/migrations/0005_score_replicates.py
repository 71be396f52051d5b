"""Scores keep their replicates on the split's shared image resamples, from which the interval, the paired
tests and the mean over languages are read (challenges.statistics).

The intervals stored before were bootstraps of the mean of per-image values: for BLEU-n and METEOR
(corpus statistics) and for CIDEr on a part of a test phase (its own document frequencies) not the
interval of the number beside them. Those are removed; ROUGE-L's and the CLIP scores' (means of per-image
values that do not depend on the corpus) are kept. Entries scored before have no paired test (they have no
replicates); entries scored from now on have both."""

from django.db import migrations, models

CORPUS_STATISTICS = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "CIDEr", "CIDEr-D"]


def drop_intervals(apps, schema_editor):
    SubmissionScore = apps.get_model("challenges", "SubmissionScore")
    SubmissionScore.objects.filter(metric__in=CORPUS_STATISTICS, replicates__isnull=True).update(
        low=None, high=None
    )


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0004_blind_comparison_names"),
    ]

    operations = [
        migrations.AddField(
            model_name="submissionscore",
            name="replicates",
            field=models.BinaryField(
                editable=False,
                help_text="The score on each of the split's shared image resamples (float64, little-endian): "
                "what the interval, the paired tests and the mean over languages are read from.",
                null=True,
            ),
        ),
        migrations.RunPython(drop_intervals, migrations.RunPython.noop),
    ]

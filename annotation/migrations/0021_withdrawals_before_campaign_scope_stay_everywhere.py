"""Withdrawals made before they had a campaign kept the image out of every pool: they stay so
(``everywhere``), and name the campaign of the image's earliest open report, where there is one.
Reversible: going back, the columns this fills are dropped by the schema migration before it."""

from django.db import migrations


def scope_old_withdrawals(apps, schema_editor):
    ImageWithdrawal = apps.get_model("annotation", "ImageWithdrawal")
    ImageReport = apps.get_model("annotation", "ImageReport")
    for withdrawal in ImageWithdrawal.objects.filter(campaign__isnull=True):
        first = (
            ImageReport.objects.filter(image_id=withdrawal.image_id, resolved=False)
            .order_by("created_at", "pk")
            .first()
        )
        withdrawal.everywhere = True
        withdrawal.campaign_id = first.campaign_id if first else None
        withdrawal.save(update_fields=["everywhere", "campaign"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0020_image_reports_per_campaign_and_trusted_reporters"),
    ]

    operations = [
        migrations.RunPython(scope_old_withdrawals, migrations.RunPython.noop),
    ]

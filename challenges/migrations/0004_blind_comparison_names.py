"""Side-by-side campaigns made from entries were named "… · pair <id>/<id>": submission ids, which the
leaderboard's CSV, JSON and API pair with team and method, on the annotators' dashboard and page titles.
Rename them as new ones are named (challenges.human.blinded_campaign_name): a random label, no id."""

import re
import secrets

from django.db import migrations

BLIND_LETTERS = "bcdfghjkmnpqrstvwxz"
PAIR = re.compile(r" · pair \d+/\d+$")


def blind(apps, schema_editor):
    HumanComparison = apps.get_model("challenges", "HumanComparison")
    Campaign = apps.get_model("annotation", "Campaign")
    for comparison in HumanComparison.objects.select_related("campaign"):
        campaign = comparison.campaign
        if PAIR.search(campaign.name):
            label = "".join(secrets.choice(BLIND_LETTERS) for _ in range(6))
            Campaign.objects.filter(pk=campaign.pk).update(
                name=PAIR.sub(f" · comparison {label}", campaign.name)
            )


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0003_phase_clip_model"),
    ]

    operations = [migrations.RunPython(blind, migrations.RunPython.noop)]

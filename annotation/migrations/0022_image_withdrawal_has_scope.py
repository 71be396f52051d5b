"""A withdrawal names its campaign or holds everywhere (after 0014 gave the old ones their scope:
the constraint goes in its own migration, as PostgreSQL will not alter a table with the data
migration's deferred checks still pending)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0021_withdrawals_before_campaign_scope_stay_everywhere"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="imagewithdrawal",
            constraint=models.CheckConstraint(
                condition=models.Q(("campaign__isnull", False), ("everywhere", True), _connector="OR"),
                name="image_withdrawal_has_scope",
            ),
        ),
    ]

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0015_reference_set_public_dataset_and_verified"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReportPiece",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "key",
                    models.CharField(help_text="Hash of the language's inputs.", max_length=64, unique=True),
                ),
                ("language", models.CharField(max_length=35)),
                ("payload", models.BinaryField(editable=False)),
            ],
            options={
                "verbose_name": "stored report piece",
                "verbose_name_plural": "stored report pieces",
            },
        ),
    ]

from pathlib import Path

from django.core.management.base import CommandError

from annotation.importers import images_import
from annotation.importers.command import ImportCommand


class Command(ImportCommand):
    help = (
        "Import images: metadata and/or image files, all or nothing, idempotent.\n"
        "XM3600: import_images --metadata image_ids.txt --attributions image_attributions.csv "
        "--shapes image_shapes.csv [--folder DIR]. "
        "Files in --folder are matched by name: <key>.jpg|.png|... "
        "Keys of attribution/shape rows and files that are neither in the metadata nor stored are "
        "reported and skipped. Any malformed line or refused file imports nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--folder", type=Path, help="Folder of image files named <key>.<ext>.")
        parser.add_argument(
            "--metadata",
            type=Path,
            help=(
                "The images to import: .txt (one key per line), .csv (header with 'key' and any of license, "
                "author, title, source_url, latitude, longitude, country, region, continent; or an Open "
                "Images attribution CSV) or .jsonl (one object per line, same names)."
            ),
        )
        parser.add_argument(
            "--attributions",
            type=Path,
            help="Open Images attribution CSV (ImageID, License, Author, Title, OriginalLandingURL, ...).",
        )
        parser.add_argument(
            "--shapes",
            type=Path,
            help="CSV of key,width,height (header optional): sizes of images without a file.",
        )
        self.add_dry_run_argument(parser)

    def handle(self, *args, **options):
        if not any(options[name] for name in ("folder", "metadata", "attributions", "shapes")):
            raise CommandError("Give --folder and/or --metadata (with --attributions, --shapes as needed).")
        self.run_import(
            options,
            images_import,
            folder=options["folder"],
            metadata=options["metadata"],
            attributions=options["attributions"],
            shapes=options["shapes"],
        )

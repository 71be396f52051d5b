from annotation.importers.command import CaptionFileImportCommand
from evaluation.metrics.references import FORMATS, references_import


class Command(CaptionFileImportCommand):
    help = (
        "Import reference captions into a named reference set, all or nothing, idempotent. FILE is an "
        'XM3600 captions file (JSON lines {"image/key": ..., "<lang>": {"caption": [...]}}: the captions '
        'of --language) or COCO annotations ({"images": [...], "annotations": [{"image_id", "caption"}]}: '
        "image_id is matched to the image key). A malformed file imports nothing and the error names the "
        "line or entry. Image keys that are not stored are reported and nothing is imported, unless "
        "--skip-unknown. Re-importing the same file changes nothing; a changed file updates the set to it."
    )
    service = staticmethod(references_import)
    file_help = "XM3600 .jsonl or COCO annotations .json file."
    language_help = "Language code of the references, e.g. de."
    language_required = True
    skip_unknown_help = "Import the other references when some image keys are unknown."

    def more_arguments(self, parser):
        parser.add_argument("--name", required=True, help="Name of the reference set (created if new).")
        parser.add_argument(
            "--format", choices=FORMATS, default="auto", help="File format (default: recognised)."
        )
        parser.add_argument(
            "--public-dataset",
            default=None,
            metavar="NAME",
            help='The public dataset the file comes from, with its licence (e.g. "XM3600, CC-BY 4.0"): shown '
            "wherever a benchmark is scored on these references, since anyone may have trained on them. "
            '"" marks the set as written on this platform.',
        )

    def service_options(self, options):
        return {
            "name": options["name"],
            "format": options["format"],
            "public_dataset": options["public_dataset"],
        }

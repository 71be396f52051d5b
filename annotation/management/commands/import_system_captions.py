from annotation.importers import system_captions_import
from annotation.importers.command import CaptionFileImportCommand


class Command(CaptionFileImportCommand):
    help = (
        "Import a captioning system's captions, all or nothing, idempotent. FILE is either COCO results "
        '([{"image_id": ..., "caption": ...}], needs --language; image_id is matched to the image key) or '
        'JSON lines in the XM3600 style ({"image/key": ..., "<lang>": {"caption": [...]}}: the first caption '
        "of every language, or of --language only). Image keys that are not stored are reported and nothing "
        "is imported, unless --skip-unknown. A changed caption text is updated."
    )
    service = staticmethod(system_captions_import)
    file_help = "COCO results .json or JSON lines file."
    language_help = "Language code of the captions (required for COCO results)."
    skip_unknown_help = "Import the other captions when some image keys are unknown."

    def more_arguments(self, parser):
        parser.add_argument("--system", required=True, help="Name of the captioning system (created if new).")

    def service_options(self, options):
        return {"system_name": options["system"]}

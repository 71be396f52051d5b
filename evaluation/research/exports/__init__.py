"""Research exports: captions, system captions, ratings and side-by-side judgments, streamed.

* :mod:`.writers`: the formats as plain generators (XM3600 captions lines, COCO annotations,
  COCO results, RFC 4180 CSV, JSON lines); no Django.
* :mod:`.rows`: the ordered database reads that feed them, chunk by chunk.
* :mod:`.catalogue`: what can be exported (kinds, formats, file types, notes).
* :mod:`.services`: ``export_prepare`` (what to export), ``export_write`` (a file and its
  ``.provenance.json`` sidecar), ``export_digest`` (the provenance with the sha256, for the web).

Used by ``manage.py export`` and the download views of ``evaluation.research.exports.views``.
"""

from .catalogue import CAMPAIGN_KINDS, FILE_TYPES, FORMATS
from .services import (
    ExportStream,
    campaign_exports,
    export_digest,
    export_prepare,
    export_to,
    export_write,
    provenance_json,
    sidecar_path,
)

__all__ = [
    "CAMPAIGN_KINDS",
    "FILE_TYPES",
    "FORMATS",
    "ExportStream",
    "campaign_exports",
    "export_digest",
    "export_prepare",
    "export_to",
    "export_write",
    "provenance_json",
    "sidecar_path",
]

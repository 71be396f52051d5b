"""Importers: files from outside (image metadata and files, system captions, annotators) into the database.

Each import parses and validates its whole input first, then writes in one transaction;
it is idempotent and returns an ImportReport. The management commands ``import_images``
and ``import_system_captions`` are thin wrappers around these services.
"""

from annotation.importers.annotators import annotators_import
from annotation.importers.captions import system_captions_import
from annotation.importers.images import images_import
from annotation.importers.report import ImportReport

__all__ = ["ImportReport", "annotators_import", "images_import", "system_captions_import"]

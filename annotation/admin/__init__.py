"""The admin for project managers (write) and researchers (read): see ``core.access``."""

from annotation.admin import annotators, campaigns, catalog, quality  # noqa: F401  (registers the model admins)

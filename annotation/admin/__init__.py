"""The admin for project managers (write) and researchers (read): see ``core.access``."""

from annotation.admin import annotators, batches, campaigns, catalog, quality, selection  # noqa: F401  (registers the model admins)
from annotation.workforce import admin as workforce_admin  # noqa: F401  (entry links, onboarding, pilots)

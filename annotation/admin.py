from django.contrib import admin  # noqa: F401  (the admin is filled in by annotation/admin/ later)

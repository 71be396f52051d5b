"""The abstract base every model of the platform inherits: when a row was created and last changed."""

from django.db import models
from django.db.models import Q


class TimeStamped(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Named(TimeStamped):
    """A row known by its unique name: listed in name order and shown by it. The subclass declares
    ``name`` (its length is its own)."""

    class Meta:
        abstract = True
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


def optional_fk(to, related_name: str, *, on_delete=models.PROTECT, **options) -> models.ForeignKey:
    """A reference a row may lack: NULL in the database, blank in forms; by default it protects what
    it names from deletion (``on_delete``). ``options``: ``help_text``, ``verbose_name`` and the like."""
    return models.ForeignKey(
        to, on_delete=on_delete, null=True, blank=True, related_name=related_name, **options
    )


def one_of(field: str, choices: type[models.Choices], name: str) -> models.CheckConstraint:
    """The database refuses a ``field`` value that is not one of ``choices``' values."""
    return models.CheckConstraint(condition=Q(**{f"{field}__in": choices.values}), name=name)

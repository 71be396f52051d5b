"""A stored row written again with SQL built once, not once per save.

``instance.save()`` of a row that exists sends ``UPDATE <table> SET <every column> WHERE id = <pk>``,
and the ORM builds that statement (a queryset, a filter, an update compiler, quoting) on every call:
for a draft save, which writes two such rows, that building costs more CPU than the locked read and
the two round trips together. :func:`row_update` sends the same statement with the same values, each
prepared by its field as the ORM prepares it (``pre_save``, so ``auto_now`` stamps; then
``get_db_prep_save``); only the statement's text is kept, per model and database vendor.

It falls back to ``instance.save()`` wherever the two could differ: a new row, a value that is an
expression, a column the ORM wraps in SQL (``get_placeholder``), a model with ``pre_save``/``post_save`` receivers, an instance read with deferred columns (``save()``
writes only the loaded ones), and a row that the UPDATE did not find
(``save()`` then inserts it, as it would have).
"""

from __future__ import annotations

from django.db import connections, router
from django.db.models import Model
from django.db.models.signals import post_save, pre_save

_SQL: dict[tuple[type[Model], str], tuple[str, list]] = {}


def _statement(model: type[Model], connection) -> tuple[str, list]:
    key = (model, connection.vendor)
    found = _SQL.get(key)
    if found is None:
        meta = model._meta
        quote = connection.ops.quote_name
        fields = [f for f in meta.local_concrete_fields if not f.primary_key]
        if any(hasattr(f, "get_placeholder") for f in fields):  # a column the ORM wraps in SQL
            found = _SQL[key] = ("", [])
            return found
        assignments = ", ".join(f"{quote(f.column)} = %s" for f in fields)
        sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(meta.pk.column)} = %s"  # noqa: S608 - names from the model, values as parameters
        found = _SQL[key] = (sql, fields)
    return found


def row_update(instance: Model) -> None:
    """Store ``instance`` as ``instance.save()`` does: one UPDATE of every column by primary key
    for a row that exists, else ``save()`` itself. Call it inside the caller's transaction."""
    model = type(instance)
    meta = model._meta
    if (
        instance._state.adding
        or instance.pk is None
        or meta.parents
        or pre_save.has_listeners(model)
        or post_save.has_listeners(model)
        or instance.get_deferred_fields()  # save() writes only the loaded columns of such an instance
    ):
        instance.save()
        return
    using = instance._state.db or router.db_for_write(model, instance=instance)
    connection = connections[using]
    sql, fields = _statement(model, connection)
    if not sql:
        instance.save()
        return
    params = []
    for field in fields:
        value = field.pre_save(instance, False)
        if hasattr(value, "resolve_expression"):
            instance.save()
            return
        params.append(field.get_db_prep_save(value, connection=connection))
    params.append(meta.pk.get_db_prep_value(instance.pk, connection))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if cursor.rowcount:
            return
    instance.save()

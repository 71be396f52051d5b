"""Reads whose SQL the ORM builds once per thread instead of once per call.

Every request reads its session and its user (with the annotator profile) before the view runs; every
screen and batch-wide write reads its batch with the campaign and language; every batch request reads
the campaign, the annotator's open batch, enrolments and whether a tutorial is required. The
ORM builds each query's SQL afresh each time (columns, joins, quoting, converters): for these two small
reads that costs four times the database round trip itself, about 0.7 ms of CPU per request together.
A :class:`CompiledRead` asks the ORM for the SQL and for how to turn a row into objects once, then per
call only sends the parameters and builds the objects the way the ORM does (``Model.from_db``,
``select_related`` populators, field converters). The rows are read from the database on every call,
as before: nothing is cached but the query's text, so no change to a row can be missed.

The compiled form is kept per thread and per database connection object, because the ORM's row
converters belong to the connection that compiled them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.db import connections, router
from django.db.models import Field, Model, QuerySet
from django.db.models.query import get_related_populators

# A value no real key takes, per kind of field, to find each parameter's place in the compiled SQL.
_SENTINELS = {
    int: -2_000_123_457,  # within every integer column's range (out of range compiles to nothing)
    str: "compiled-read-sentinel-0b5e",
    datetime: datetime(1901, 2, 3, 4, 5, 6, 789012, tzinfo=UTC),
}


def _sentinel(kind: type, number: int):
    """The ``number``-th value of ``kind`` no real key takes: each keyword gets its own, so that two
    keywords of one kind (a batch id and an annotator id) are told apart in the compiled SQL."""
    base = _SENTINELS[kind]
    if kind is int:
        return base - number
    if kind is str:
        return f"{base}-{number}"
    return base + timedelta(microseconds=number)


class _Compiled:
    def __init__(self, connection, sql: str, slots: list[str], compiler, fields: dict[str, Field]):
        self.connection = connection
        self.sql = sql
        self.slots = slots
        self.fields = fields
        select, klass_info = compiler.select, compiler.klass_info
        self.model = klass_info["model"]
        start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        self.own = slice(start, end)
        self.init_list = [column[0].target.attname for column in select[start:end]]
        self.populators = get_related_populators(klass_info, select, connection.alias)
        self.converters = list(compiler.get_converters([column[0] for column in select]).items())
        # Per integer keyword: its column's range. A value outside it matches no row, as the ORM's
        # lookups say (EmptyResultSet), instead of reaching the database (where SQLite cannot bind it).
        self.ranges = {}
        for name, field in fields.items():
            internal_type = getattr(field, "target_field", field).get_internal_type()
            if internal_type in connection.ops.integer_field_ranges:
                self.ranges[name] = connection.ops.integer_field_range(internal_type)


class CompiledRead:
    """``read(**values)``: the one ``model`` object ``build(**values)`` selects, or None when no row matches.

    ``build`` returns the queryset (filters, ``select_related``, ``only``, ``select_for_update``, an
    ordering and a slice) for keyword values of the kinds ``kinds`` names (``int``, ``str`` or an aware
    ``datetime``); each value must reach the SQL as one parameter of one field, as ``field=value`` or
    ``field__gt=value`` filters do. Other parameters (``stage__in=<constants>``) are the same on every
    call and are kept as compiled. The queryset must select model instances (no ``values()``,
    annotations or ``prefetch_related``). ``all(**values)``: every row it selects, in its order.
    A read ``select_for_update`` must run inside the caller's transaction, as the ORM's would."""

    def __init__(self, model: type[Model], build: Callable[..., QuerySet], kinds: dict[str, type]):
        self.model = model
        self.build = build
        self.kinds = kinds
        self._local = threading.local()

    def _compile(self, alias: str) -> _Compiled:
        connection = connections[alias]
        compiled = getattr(self._local, alias, None)
        if compiled is not None and compiled.connection is connection:
            return compiled
        sentinels = self._sentinels()
        queryset = self.build(**sentinels)
        if queryset._prefetch_related_lookups or queryset.query.annotations or queryset._fields:
            raise ValueError("CompiledRead selects plain model instances only")
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        fields = self._fields(queryset)
        slots = []  # per parameter: the keyword it takes, or (the constant,)
        prepared = {
            name: fields[name].get_db_prep_value(value, connection, prepared=False)
            for name, value in sentinels.items()
        }
        for param in params:
            names = [name for name, value in prepared.items() if param == value]
            if len(names) > 1:
                raise ValueError(f"CompiledRead: cannot place the parameter {param!r} of {sql}")
            slots.append(names[0] if names else (param,))
        if set(self.kinds) - {slot for slot in slots if isinstance(slot, str)}:
            raise ValueError(f"CompiledRead: a keyword does not reach the SQL of {sql}")
        compiled = _Compiled(connection, sql, slots, compiler, fields)
        setattr(self._local, alias, compiled)
        return compiled

    def _sentinels(self) -> dict:
        return {name: _sentinel(kind, number) for number, (name, kind) in enumerate(self.kinds.items())}

    def _fields(self, queryset: QuerySet) -> dict[str, Field]:
        """The field each keyword value is compared with, from the queryset's WHERE clause."""
        fields = {}
        nodes, lookups = [queryset.query.where], []
        while nodes:
            node = nodes.pop()
            children = getattr(node, "children", None)
            if children is None:
                lookups.append(node)
            else:
                nodes.extend(children)
        for lookup in lookups:
            rhs = getattr(lookup, "rhs", None)
            for name, value in self._sentinels().items():
                if rhs == value:
                    fields[name] = lookup.lhs.output_field
        missing = set(self.kinds) - set(fields)
        if missing:
            raise ValueError(f"CompiledRead: no filter compares {sorted(missing)}")
        return fields

    def read(self, **values) -> Model | None:
        rows = self._rows(values, many=False)
        return rows[0] if rows else None

    def all(self, **values) -> list[Model]:
        return self._rows(values, many=True)

    def _rows(self, values: dict, many: bool) -> list[Model]:
        alias = router.db_for_read(self.model)
        compiled = self._compile(alias)
        connection = compiled.connection
        for name, (low, high) in compiled.ranges.items():
            value = values[name]
            if isinstance(value, int) and not (
                (low is None or low <= value) and (high is None or value <= high)
            ):
                return []
        params = [
            slot[0]
            if isinstance(slot, tuple)
            else compiled.fields[slot].get_db_prep_value(values[slot], connection, prepared=False)
            for slot in compiled.slots
        ]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall() if many else cursor.fetchmany(1)
        return [self._object(compiled, alias, row) for row in rows]

    @staticmethod
    def _object(compiled: _Compiled, alias: str, row) -> Model:
        connection = compiled.connection
        if compiled.converters:
            row = list(row)
            for position, (converters, expression) in compiled.converters:
                value = row[position]
                for converter in converters:
                    value = converter(value, expression, connection)
                row[position] = value
        obj = compiled.model.from_db(alias, compiled.init_list, row[compiled.own])
        for populator in compiled.populators:
            populator.populate(row, obj)
        return obj

"""Model instances from hand-written SQL, for the annotator's hot endpoints (issue #17).

Compiling a queryset costs the ORM about a millisecond of CPU per statement, more than the
database spends answering it; `next` and `submit` send several on every request. There the SQL
is a string built once from the models' metadata, and these helpers turn its rows back into
model instances with the same conversions the ORM applies (JSON, and dates on SQLite), so the
callers get the objects they always got.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from django.db import connection, models

M = TypeVar("M", bound=models.Model)


def qn(name: str) -> str:
    return connection.ops.quote_name(name)


def table(model: type[models.Model]) -> str:
    return qn(model._meta.db_table)


def columns(model: type[models.Model], alias: str = "") -> str:
    """Every concrete column of the model, in field order (what `from_row` reads back)."""
    prefix = f"{qn(alias)}." if alias else ""
    return ", ".join(prefix + qn(field.column) for field in model._meta.concrete_fields)


def width(model: type[models.Model]) -> int:
    return len(model._meta.concrete_fields)


@cache
def _converters(model: type[models.Model], vendor: str) -> tuple:
    """Per column: the ORM's converters from database value to Python value (as SQLCompiler
    applies them), kept only where there are any."""
    out = []
    for index, field in enumerate(model._meta.concrete_fields):
        column = field.get_col(model._meta.db_table)
        found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        if found:
            out.append((index, column, tuple(found)))
    return tuple(out)


@cache
def _attnames(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(field.attname for field in model._meta.concrete_fields)


def from_row(model: type[M], row: Sequence[Any], start: int = 0) -> M:
    """The instance whose `columns(model)` start at `row[start]`, converted as the ORM does."""
    values = list(row[start : start + width(model)])
    for index, column, converters in _converters(model, connection.vendor):
        for convert in converters:
            values[index] = convert(values[index], column, connection)
    return model.from_db(connection.alias, _attnames(model), values)


def value(model: type[models.Model], field: str, raw: Any) -> Any:
    """One column's value as the ORM would read it into `model.field`."""
    index = _attnames(model).index(model._meta.get_field(field).attname)
    for at, column, converters in _converters(model, connection.vendor):
        if at == index:
            for convert in converters:
                raw = convert(raw, column, connection)
    return raw


def when(value: datetime) -> Any:
    """A datetime parameter as the database stores it (naive UTC text on SQLite)."""
    return connection.ops.adapt_datetimefield_value(value)


def json(model: type[models.Model], field: str, value: Any) -> Any:
    """A JSON parameter adapted as the ORM would write it to `model.field`."""
    return model._meta.get_field(field).get_db_prep_value(value, connection)


def fetchone(sql: str, params: Sequence[Any]) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def execute(sql: str, params: Sequence[Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount

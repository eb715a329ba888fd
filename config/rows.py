"""Model instances from hand-written SQL, for the annotator's hot endpoints (issue #17).

Compiling a queryset costs the ORM about a millisecond of CPU per statement, more than the
database spends answering it; `next` and `submit` send several on every request. There the SQL
is a string built once from the models' metadata, and these helpers turn its rows back into
model instances with the same conversions the ORM applies (JSON, and dates on SQLite), so the
callers get the objects they always got.

On PostgreSQL these statements are also prepared, once per connection and statement
(`DATABASE_PREPARED_STATEMENTS`): parsing and planning them cost the server more than running
them. A statement whose best plan depends on its parameters opts out (`prepared=False`).

The statements themselves live in one module per app (`annotator/sql.py`, `projects/sql.py`,
`accounts/sql.py`, `review/sql.py`). What they need of the ORM's private parts (a queryset's
compiled SQL, an instance's saved state, a prefetch cache, the database wrapper) is asked here
and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.models import Expression, QuerySet

M = TypeVar("M", bound=models.Model)


def qn(name: str) -> str:
    return connection.ops.quote_name(name)


def table(model: type[models.Model]) -> str:
    return qn(model._meta.db_table)


def columns(model: type[models.Model], alias: str = "") -> str:
    """Every concrete column of the model, in field order (what `from_row` reads back)."""
    return _columns(model, alias, connection.vendor)


@cache
def _columns(model: type[models.Model], alias: str, vendor: str) -> str:
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
        own = field.get_db_converters  # type: ignore[attr-defined]  # missing from django-stubs
        found = connection.ops.get_db_converters(column) + own(connection)
        if found:
            out.append((index, column, tuple(found)))
    return tuple(out)


@cache
def _attnames(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(field.attname for field in model._meta.concrete_fields)


def _db() -> Any:
    """The database wrapper itself: every attribute read through `connection`, a proxy, looks
    the wrapper up again (hundreds of times in a submit)."""
    return connections[DEFAULT_DB_ALIAS]


def from_row(model: type[M], row: Sequence[Any], start: int = 0) -> M:
    """The instance whose `columns(model)` start at `row[start]`, converted as the ORM does."""
    db = _db()
    values = list(row[start : start + width(model)])
    for index, column, converters in _converters(model, db.vendor):
        for convert in converters:
            values[index] = convert(values[index], column, db)
    return model.from_db(db.alias, _attnames(model), values)


def _field(model: type[models.Model], name: str) -> models.Field:
    """A concrete field by name (get_field also answers relations, which have no column)."""
    found = model._meta.get_field(name)
    assert isinstance(found, models.Field), f"{model.__name__}.{name} is not a column"
    return found


def value(model: type[models.Model], field: str, raw: Any) -> Any:
    """One column's value as the ORM would read it into `model.field`."""
    db = _db()
    index = _attnames(model).index(_field(model, field).attname)
    for at, column, converters in _converters(model, db.vendor):
        if at == index:
            for convert in converters:
                raw = convert(raw, column, db)
    return raw


def when(value: datetime) -> Any:
    """A datetime parameter as the database stores it (naive UTC text on SQLite)."""
    return _db().ops.adapt_datetimefield_value(value)


def json(model: type[models.Model], field: str, value: Any) -> Any:
    """A JSON parameter adapted as the ORM would write it to `model.field`."""
    return _field(model, field).get_db_prep_value(value, _db())


def saved(obj: M, pk: Any) -> M:
    """An instance built in Python for a row just written by hand: its primary key set and
    marked as saved (as `from_db` or `save()` would leave it)."""
    obj.pk = pk
    obj._state.adding, obj._state.db = False, _db().alias
    return obj


def related_known(obj: models.Model, name: str, related: Sequence[models.Model]) -> None:
    """What `obj.<name>.all()` returns (a reverse foreign key), as prefetch_related leaves it,
    so a caller shows rows it has just written or read without reading them back."""
    relation = obj._meta.get_field(name)
    model, field = relation.related_model, relation.field.name  # type: ignore[union-attr]
    # The filter is deferred (as Django's related managers defer theirs): compiling it cost
    # more than the rest, and it is only applied if someone chains onto the queryset.
    cached: Any = model._default_manager.all()  # type: ignore[union-attr]
    cached._defer_next_filter = True
    cached = cached.filter(**{field: obj})
    cached._result_cache = list(related)
    cached._prefetch_done = True
    prefetched = getattr(obj, "_prefetched_objects_cache", {})
    obj._prefetched_objects_cache = {**prefetched, name: cached}  # type: ignore[attr-defined]


class Slot(Expression):
    """A named parameter of a queryset compiled once (`compiled`): stands where a value goes,
    e.g. ``filter(project_id=Slot("project", IntegerField()))``."""

    def __init__(self, name: str, output_field: models.Field) -> None:
        super().__init__(output_field=output_field)
        self.name = name

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list]:
        return "%s", [self]


def compiled(queryset: QuerySet) -> tuple[str, tuple, dict[str, tuple[int, ...]]]:
    """A queryset's SQL and parameters, compiled once, and where each `Slot`'s value goes among
    the parameters (bind them with `bind`): the ORM writes a statement whose conditions are a
    rule kept as a queryset, and the hot path runs it without compiling it again."""
    sql, params = queryset.query.sql_with_params()
    slots: dict[str, list[int]] = {}
    for index, param in enumerate(params):
        if isinstance(param, Slot):
            slots.setdefault(param.name, []).append(index)
    return sql, tuple(params), {name: tuple(at) for name, at in slots.items()}


def bind(params: Sequence[Any], slots: dict[str, tuple[int, ...]], **values: Any) -> list:
    """The parameters of a `compiled` statement with each slot's value in its places."""
    bound = list(params)
    for name, at in slots.items():
        for index in at:
            bound[index] = values[name]
    return bound


@cache
def _insert_sql(model: type[models.Model], n: int, conflict: tuple, vendor: str) -> str:
    fields = _writable(model)
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = (
        f"INSERT INTO {table(model)} ({', '.join(qn(f.column) for f in fields)}) "
        f"VALUES {', '.join([one] * n)}"
    )
    if conflict:
        unique, update = conflict
        target = ", ".join(qn(_field(model, f).column) for f in unique)
        columns_ = [qn(_field(model, f).column) for f in update]
        sql += f" ON CONFLICT ({target}) DO UPDATE SET " + ", ".join(
            f"{c} = EXCLUDED.{c}" for c in columns_
        )
    return sql + f" RETURNING {qn(model._meta.pk.column)}"


@cache
def _writable(model: type[models.Model]) -> tuple:
    return tuple(f for f in model._meta.concrete_fields if not f.primary_key)


def insert(objs: Sequence[M], *, conflict: tuple = ()) -> Sequence[M]:
    """INSERT the new instances in one statement (values prepared as `save()` prepares them,
    auto_now fields included) and set their primary keys. `conflict`: (unique fields, fields
    to update) for an INSERT … ON CONFLICT DO UPDATE, as bulk_create(update_conflicts=True)."""
    if not objs:
        return objs
    model = type(objs[0])
    fields = _writable(model)
    db = _db()
    params = [f.get_db_prep_save(f.pre_save(obj, True), db) for obj in objs for f in fields]
    with _cursor(prepared=True) as cursor:
        cursor.execute(_insert_sql(model, len(objs), conflict, db.vendor), params)
        keys = cursor.fetchall()
    for obj, (pk,) in zip(objs, keys, strict=True):
        saved(obj, pk)
    return objs


def update(obj: models.Model, fields: Sequence[str]) -> None:
    """`obj.save(update_fields=fields)` without the ORM's compiling (auto_now fields among
    `fields` are set as save() sets them)."""
    model = type(obj)
    found = [_field(model, name) for name in fields]
    assignments = ", ".join(f"{qn(f.column)} = %s" for f in found)
    db = _db()
    params = [f.get_db_prep_save(f.pre_save(obj, False), db) for f in found]
    execute(
        f"UPDATE {table(model)} SET {assignments} WHERE {qn(model._meta.pk.column)} = %s",
        [*params, obj.pk],
    )


def fetchone(sql: str, params: Sequence[Any], *, prepared: bool = True) -> tuple | None:
    with _cursor(prepared) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def execute(sql: str, params: Sequence[Any]) -> int:
    with _cursor(prepared=True) as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _cursor(prepared: bool) -> Any:
    """Django's cursor (its query log and wrappers included) over, where statements are
    prepared, a psycopg cursor that binds on the server and prepares what it runs."""
    db = _db()
    if not (prepared and settings.DATABASE_PREPARED_STATEMENTS):
        return db.cursor()
    # What connection.cursor() does, with another cursor class under the same wrappers.
    db.close_if_health_check_failed()
    db.ensure_connection()
    preparing, debug_wrapper = _preparing_classes()
    with db.wrap_database_errors:
        db.validate_thread_sharing()
        raw = preparing(db.connection)
    if db.queries_logged:
        return debug_wrapper(raw, db)
    return db.make_cursor(raw)


@cache
def _preparing_classes() -> tuple[type, type]:
    from django.db.backends.postgresql.base import (  # type: ignore[attr-defined]
        CursorDebugWrapper,
        ServerBindingCursor,
    )
    from django.db.backends.utils import CursorWrapper

    class PreparingCursor(ServerBindingCursor):
        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

    class PreparedDebugWrapper(CursorDebugWrapper):
        """The query log shows the statement with its values, as for the ORM's cursors (psycopg
        keeps no text of a prepared statement's run to read it from)."""

        def execute(self, sql, params=None):
            with self.debug_sql(self.db.ops.compose_sql(sql, params)):
                return CursorWrapper.execute(self, sql, params)

    return PreparingCursor, PreparedDebugWrapper

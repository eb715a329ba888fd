"""A ready release's records, inserted with its manifest in one transaction."""

from __future__ import annotations

from django.db import connection

from pairdiff.release.build import ReleaseFiles
from releases.models import Release, ReleaseRecord

RECORDS_BATCH = 1000


def records_insert(release: Release, built: ReleaseFiles) -> None:
    """The release's records, in the caller's transaction: on PostgreSQL by COPY, with each
    record's JSON as benchmark.json holds it (one per line; a 10,000-pair release's
    bulk_create quoted every value in Python for seconds)."""
    records = built.records
    texts = record_texts(built.files.get("benchmark.json", b""), len(records))
    if connection.vendor != "postgresql" or texts is None:
        ReleaseRecord.objects.bulk_create(
            (
                ReleaseRecord(
                    release=release,
                    pair_id=record["pair_id"],
                    position=i,
                    split=record["split"],
                    category=record["category"],
                    difficulty=record["difficulty"] or "",
                    data=record,
                )
                for i, record in enumerate(records)
            ),
            batch_size=RECORDS_BATCH,
        )
        return
    names = ("release_id", "pair_id", "position", "split", "category", "difficulty", "data")
    columns = ", ".join(connection.ops.quote_name(column) for column in names)
    table = connection.ops.quote_name(ReleaseRecord._meta.db_table)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for i, (record, text) in enumerate(zip(records, texts, strict=True)):
            copy.write_row(
                (
                    release.pk,
                    record["pair_id"],
                    i,
                    record["split"],
                    record["category"],
                    record["difficulty"] or "",
                    text,
                )
            )


def record_texts(benchmark: bytes, count: int) -> list[str] | None:
    """Each record's JSON text from benchmark.json (``build._json``: a line per record; the
    released records first, then the order-swapped copy of the test split, which has no rows),
    or None when the file does not hold ``count`` of them that way."""
    lines = benchmark.decode().split("\n")
    if count == 0 or len(lines) < count + 3 or lines[0] != "[" or lines[-2:] != ["]", ""]:
        return None
    body = lines[1:-2]
    if not all(line.endswith(",") for line in body[:-1]) or body[-1].endswith(","):
        return None
    return [line.removesuffix(",") for line in body[:count]]

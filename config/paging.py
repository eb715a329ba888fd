"""Page-numbered lists that stay fast deep into a large table.

Django's Paginator reads a page as ``OFFSET n LIMIT k`` over whole rows: page 2,000 of a
100,000-pair project walks 96,000 rows of the table first. ``IdsFirstPaginator`` walks the
ordering's index for the page's primary keys only (an index-only scan where an index covers the
filter and the order, e.g. pair (project, id)), then reads the page's rows by key, in the same
order. Same pages, same page numbers, same contract; the pages' querysets keep their
select_related/prefetch_related. The first pages (offset under DEEP) are read as before, in one
query: skipping a few hundred rows costs less than the second query.
"""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from rest_framework.pagination import CursorPagination, PageNumberPagination

DEEP = 1000  # rows skipped from which a page is read ids first


class IdsFirstPaginator(Paginator):
    def page(self, number) -> Page:
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        top = min(bottom + self.per_page, self.count)
        if bottom < DEEP or not isinstance(self.object_list, QuerySet):
            return super().page(number)
        ids = list(self.object_list.values_list("pk", flat=True)[bottom:top])
        rows = {row.pk: row for row in self.object_list.filter(pk__in=ids).order_by()}
        return Page([rows[pk] for pk in ids if pk in rows], number, self)


class IdsFirstPagination(PageNumberPagination):
    """DRF's page-numbered pagination (``?page=``) reading pages with IdsFirstPaginator."""

    django_paginator_class = IdsFirstPaginator


class IdCursorPagination(CursorPagination):
    """``?cursor=``: the next page starts after the last id seen, so every page costs the
    same however deep (keyset pagination); for clients walking a whole list."""

    ordering = "id"
    page_size = 50

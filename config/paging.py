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

from functools import cached_property

from django.core.paginator import EmptyPage, InvalidPage, Page, PageNotAnInteger, Paginator
from django.db.models import QuerySet
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.response import Response

DEEP = 1000  # rows skipped from which a page is read ids first
COUNT_CAP = 1000  # CappedCountPaginator's count stops here unless told otherwise


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


class CappedCountPaginator(IdsFirstPaginator):
    """IdsFirstPaginator whose count stops at ``cap`` rows (``capped``: there are more; show
    "1,000+"): for a filter whose count would probe every row of a large set. Pages past the
    cap are served as long as they hold rows (``has_next``: a row follows the page)."""

    def __init__(self, object_list: QuerySet, per_page: int, *, cap: int | None = None) -> None:
        super().__init__(object_list, per_page)
        self.queryset = object_list
        self.cap = COUNT_CAP if cap is None else cap
        self.capped = False

    @cached_property
    def count(self) -> int:
        counted = self.queryset.order_by()[: self.cap + 1].count()
        self.capped = counted > self.cap
        return min(counted, self.cap)

    def validate_number(self, number) -> int:
        if not self.count or not self.capped:  # count first: it sets capped
            return super().validate_number(number)
        try:
            number = int(number)
        except (TypeError, ValueError) as error:
            raise PageNotAnInteger("That page number is not an integer") from error
        if number < 1:
            raise EmptyPage("That page number is less than 1")
        return number

    def page(self, number) -> Page:
        number = self.validate_number(number)
        if not self.capped:
            return super().page(number)
        bottom = (number - 1) * self.per_page
        ids = list(self.queryset.values_list("pk", flat=True)[bottom : bottom + self.per_page + 1])
        if not ids and number > 1:
            raise EmptyPage("That page contains no results")
        rows = {row.pk: row for row in self.queryset.filter(pk__in=ids[: self.per_page]).order_by()}
        page = _CappedPage([rows[pk] for pk in ids[: self.per_page] if pk in rows], number, self)
        page.followed = len(ids) > self.per_page
        return page

    def get_page(self, number) -> Page:
        try:
            return self.page(number)
        except PageNotAnInteger:
            return self.page(1)
        except InvalidPage:
            return self.page(1 if self.capped else self.num_pages)


class _CappedPage(Page):
    followed = False  # a row follows this page

    def has_next(self) -> bool:
        return self.followed


class IdsFirstPagination(PageNumberPagination):
    """DRF's page-numbered pagination (``?page=``) reading pages with IdsFirstPaginator."""

    django_paginator_class: type[Paginator] = IdsFirstPaginator


class FlaggedCountPagination(IdsFirstPagination):
    """IdsFirstPagination whose answers say whether ``count`` is whole (``count_capped``
    false) or stopped at a cap (CappedCountPagination), for lists that answer either way."""

    def get_paginated_response(self, data) -> Response:
        assert self.page is not None  # paginate_queryset ran
        paginator = self.page.paginator
        return Response(
            {
                "count": paginator.count,
                "count_capped": getattr(paginator, "capped", False),
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )


class CappedCountPagination(FlaggedCountPagination):
    """``count`` stops at CappedCountPaginator's cap and ``count_capped`` says more rows follow;
    pages past the cap are served while they hold rows."""

    django_paginator_class: type[Paginator] = CappedCountPaginator


class IdCursorPagination(CursorPagination):
    """``?cursor=``: the next page starts after the last id seen, so every page costs the
    same however deep (keyset pagination); for clients walking a whole list."""

    ordering = "id"
    page_size = 50

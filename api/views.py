"""Thin DRF views over the same selectors the pages use."""

from typing import TYPE_CHECKING

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import generics

from accounts.users import User
from annotator import selectors
from annotator.models import PairStatus
from annotator.pair_counts import StatusCounts, pair_counts_of, pair_counts_read
from api.serializers import ErrorSerializer, ProjectSerializer
from projects import access
from projects.models import Project, Role
from review.figures import figures_of
from review.standing import accepted_breakdown


def _status_counts(project: Project, role: Role | None, counted: StatusCounts | None) -> dict:
    """Pairs by status; annotators get the total only: how many pairs were accepted, disputed
    or rejected is a verdict they are blind to. On a large project the counts are the stored
    ones (annotator.pair_counts) and ``counted_at`` says when; null: counted now."""
    counted = counted or pair_counts_of(project)
    at = counted.counted_at.isoformat() if counted.counted_at else None
    if not access.role_may(role, access.Action.SEE_VERDICTS):
        return {"pairs": counted.total, "counted_at": at}
    counts = {status: counted.counts[status] for status in PairStatus.values}
    return {"pairs": counted.total, **counts, "counted_at": at}


if TYPE_CHECKING:  # the mixin sits in front of DRF's generic views
    _ViewBase = generics.GenericAPIView
else:
    _ViewBase = object


class _ProjectMixin(_ViewBase):
    serializer_class = ProjectSerializer
    lookup_field = "slug"

    def _caller(self) -> User:
        """IsAuthenticated, the API's default permission, lets no one else this far."""
        user = self.request.user
        assert user.is_authenticated
        return user

    def get_queryset(self):
        return selectors.projects_for_user(self._caller())

    def get_serializer_context(self):
        context = super().get_serializer_context()
        roles = selectors.roles_by_project(self._caller())
        return context | {
            "roles": roles,
            "counts": lambda project: _status_counts(
                project, roles.get(project.pk), getattr(self, "counted", {}).get(project.pk)
            ),
        }


@extend_schema(responses={200: ProjectSerializer(many=True), 404: ErrorSerializer})  # 404: bad page
class ProjectList(_ProjectMixin, generics.ListAPIView):
    """Projects the caller belongs to, with pair counts by status."""

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        # The page's pairs per status in two queries, whatever the number of projects.
        self.counted = pair_counts_read(page if page is not None else queryset)
        return page


@extend_schema(responses={200: ProjectSerializer, 404: ErrorSerializer})
class ProjectDetail(_ProjectMixin, generics.RetrieveAPIView):
    """One project the caller belongs to, with its accepted pairs by category and difficulty;
    404 for any other."""

    def retrieve(self, request, *args, **kwargs):
        response = super().retrieve(request, *args, **kwargs)
        if access.role_may(Role(response.data["role"]), access.Action.SEE_VERDICTS):
            project = self.get_object()
            figures = figures_of(project)  # stored on a large project, with their time
            response.data["counts"]["accepted_by"] = (
                figures.breakdown if figures is not None else accepted_breakdown(project)
            )
            response.data["counts"]["accepted_by_at"] = (
                figures.computed_at.isoformat() if figures is not None else None
            )
        return response

    def get_object(self):
        project = self.get_queryset().filter(slug=self.kwargs["slug"]).first()
        if project is None:
            raise Http404("no such project")
        return project

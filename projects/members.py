"""Who works on a project: members and their one role each."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from projects.models import Membership, Project, Role

# The demo's annotators: programs answering from the known edits, never people. Release cards
# call them simulated.
SIMULATED_ANNOTATORS = ("demo-annotator-a", "demo-annotator-b")


def membership_set(*, project: Project, user, role: Role) -> Membership:
    """Give `user` exactly one role in `project` (replacing an earlier one)."""
    membership, _ = Membership.objects.update_or_create(
        project=project, user=user, defaults={"role": role}
    )
    return membership


def user_ensure(*, username: str, password: str | None = None):
    """The user with that name, created if missing; the password is set when given."""
    user, created = get_user_model().objects.get_or_create(username=username)
    if password is not None:
        user.set_password(password)
        user.save(update_fields=["password"])
    elif created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user

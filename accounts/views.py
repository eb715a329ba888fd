"""A person's API tokens: made here, shown once, revoked here."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from accounts.forms import TokenForm
from accounts.models import ApiToken
from accounts.services import token_create, token_revoke
from accounts.throttle import TOO_MANY, LoginForm


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """The caller's tokens and the form for a new one. A new token's secret is in this response
    only — not in a redirect's URL, not in the session — so it is never cached or stored."""
    assert request.user.is_authenticated  # @login_required; tells the type checker too
    form = TokenForm(request.POST if request.method == "POST" else None)
    created = None
    if form.is_bound and form.is_valid():
        token, secret = token_create(user=request.user, name=form.cleaned_data["name"].strip())
        created, form = {"token": token, "secret": secret}, TokenForm()
    context = {"form": form, "tokens": request.user.api_tokens.all(), "created": created}
    response = render(request, "accounts/tokens.html", context, status=400 if form.errors else 200)
    add_never_cache_headers(response)  # Cache-Control: no-store, among others
    return response


@require_POST
@login_required
def token_revoke_view(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)  # others' tokens: 404
    if token.revoked_at is None:
        token_revoke(token=token)
        label = token.name or f"{token.prefix}…"
        messages.success(request, f"Token “{label}” revoked; it no longer works.")
    return redirect("accounts:tokens")


class LoginView(auth_views.LoginView):
    """Django's log-in with failures limited per username and per address (accounts.throttle);
    a blocked attempt gets the form back with 429 and Retry-After."""

    form_class = LoginForm
    redirect_authenticated_user = True

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, TOO_MANY):
            response.status_code = 429
            response["Retry-After"] = str(form.retry_after)
        return response

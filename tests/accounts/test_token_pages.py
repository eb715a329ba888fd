"""The API tokens page: a secret shown once, only its prefix afterwards, revoking for good."""

from __future__ import annotations

import re

from django.urls import reverse

from accounts.models import ApiToken
from accounts.services import token_create, token_hash

URL = "/account/tokens/"


def _secret(html: str) -> str:
    found = re.search(r'<code id="token-secret" class="secret">([^<]+)</code>', html)
    assert found, "the page shows the secret"
    return found.group(1)


def test_the_page_is_at_account_tokens_and_linked_from_the_top(client, researcher):
    client.force_login(researcher)

    response = client.get(URL)

    assert reverse("accounts:tokens") == URL
    assert response.status_code == 200
    assert f'<a href="{URL}">API tokens</a>' in response.content.decode()
    assert "No tokens yet." in response.content.decode()


def test_anonymous_people_are_sent_to_log_in(client, db):
    response = client.get(URL)

    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_a_new_secret_is_shown_once_and_never_again(client, researcher):
    client.force_login(researcher)

    response = client.post(URL, {"name": "laptop"})

    assert response.status_code == 200  # the secret is in this response, not behind a redirect
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    secret = _secret(html)
    assert html.count(secret) == 1
    token = ApiToken.objects.get()
    assert (token.user, token.name, token.prefix) == (researcher, "laptop", secret[:8])
    assert token.key_hash == token_hash(secret)
    assert "shown only this once" in html and 'data-copy="#token-secret"' in html

    again = client.get(URL).content.decode()

    assert secret not in again
    assert f"<code>{secret[:8]}…</code>" in again and "laptop" in again


def test_a_token_needs_a_name(client, researcher):
    client.force_login(researcher)

    response = client.post(URL, {"name": "  "})

    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert not ApiToken.objects.exists()


def test_the_secret_works_until_it_is_revoked(client, project, researcher):
    client.force_login(researcher)
    secret = _secret(client.post(URL, {"name": "ci"}).content.decode())
    token = ApiToken.objects.get()
    client.logout()
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {secret}").status_code == 200

    client.force_login(researcher)
    response = client.post(reverse("accounts:token_revoke", args=[token.pk]))

    assert response.status_code == 302 and response["Location"] == URL
    token.refresh_from_db()
    assert token.revoked_at is not None
    page = client.get(URL).content.decode()
    assert "revoked" in page and reverse("accounts:token_revoke", args=[token.pk]) not in page
    client.logout()
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {secret}").status_code == 401


def test_nobody_revokes_another_persons_token(client, researcher, lead):
    token, _ = token_create(user=lead, name="lead's")
    client.force_login(researcher)

    response = client.post(reverse("accounts:token_revoke", args=[token.pk]))

    assert response.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_revoking_needs_a_post(client, researcher):
    token, _ = token_create(user=researcher, name="x")
    client.force_login(researcher)

    assert client.get(reverse("accounts:token_revoke", args=[token.pk])).status_code == 405
    token.refresh_from_db()
    assert token.revoked_at is None


def test_each_person_sees_only_their_own_tokens(client, researcher, lead):
    token_create(user=lead, name="lead-laptop")
    token_create(user=researcher, name="researcher-ci")
    client.force_login(researcher)

    html = client.get(URL).content.decode()

    assert "researcher-ci" in html and "lead-laptop" not in html

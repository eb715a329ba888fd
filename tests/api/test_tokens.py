import pytest
from django.core.cache import cache

from accounts.models import ApiToken
from accounts.services import token_hash, token_revoke
from tests.conftest import PASSWORD


@pytest.fixture(autouse=True)
def _fresh_throttle():
    cache.clear()


def _obtain(client, username="annotator_1", password=PASSWORD):
    return client.post(
        "/api/v1/auth/token/", {"username": username, "password": password}, "application/json"
    )


def test_a_token_is_issued_for_good_credentials_and_stored_hashed(client, annotator_1):
    response = _obtain(client)

    assert response.status_code == 201
    secret = response.json()["token"]
    stored = ApiToken.objects.get()
    assert stored.key_hash == token_hash(secret) and secret not in stored.key_hash
    assert stored.user == annotator_1


def test_the_token_authenticates_api_calls(client, project, annotator_1):
    secret = _obtain(client).json()["token"]

    response = client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {secret}")

    assert response.status_code == 200
    assert [p["slug"] for p in response.json()["results"]] == ["cars"]


def test_wrong_credentials_get_a_clear_error(client, annotator_1):
    response = _obtain(client, password="nope")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_credentials"


def test_a_revoked_or_unknown_token_is_refused(client, annotator_1):
    secret = _obtain(client).json()["token"]
    token_revoke(token=ApiToken.objects.get())

    for header in (f"Token {secret}", "Token not-a-token"):
        response = client.get("/api/v1/projects/", HTTP_AUTHORIZATION=header)
        assert response.status_code == 401
        assert response.json()["error"]["message"] == "invalid or revoked token"


def test_the_token_endpoint_is_rate_limited(client, annotator_1, settings):
    # One username each: the per-username log-in limit (accounts.throttle) would stop at 5.
    statuses = [_obtain(client, f"user{i}", password="guess").status_code for i in range(12)]
    assert statuses[:10] == [400] * 10 and statuses[10:] == [429, 429]

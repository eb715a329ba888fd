import pytest
from rest_framework.test import APIClient

from tests.webhooks.receiver import documented_check, receiver_start, receiver_stop


@pytest.fixture
def receiver(settings):
    """A real HTTP receiver on 127.0.0.1, which the setting allows (loopback is refused else)."""
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    found = receiver_start()
    yield found
    receiver_stop(found)


@pytest.fixture(scope="session")
def signature_valid():
    return documented_check()


def api_client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client

import re
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.webhooks.receiver import receiver_start, receiver_stop

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


@pytest.fixture
def receiver(settings):
    """A real HTTP receiver on 127.0.0.1, which the setting allows (loopback is refused else)."""
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    found = receiver_start()
    yield found
    receiver_stop(found)


@pytest.fixture(scope="session")
def signature_valid():
    """The receiver-side check exactly as docs/webhooks.md prints it."""
    block = re.search(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    assert block, "docs/webhooks.md shows no Python snippet"
    namespace: dict = {}
    exec(block.group(1), namespace)
    return namespace["diffmark_signature_valid"]


def api_client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client

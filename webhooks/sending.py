"""One signed POST to a webhook receiver, to an address checked just before connecting.

http.client, not a client that follows redirects or resolves the host again: the socket goes
to the address webhooks.addresses checked (TLS still verifies the certificate against the
URL's host name), a redirect is an answer like any other non-2xx, and the response body read
is capped.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import socket
import ssl
import time
from dataclasses import dataclass

from webhooks.addresses import AddressRefused, Network, Target, target_check

RESPONSE_KEPT = 1000  # characters of the receiver's answer kept on the attempt
USER_AGENT = "Diffmark-Webhook/1"


def signature(secret: str, body: bytes) -> str:
    """The X-Diffmark-Signature header's value: ``sha256=`` and the hex HMAC-SHA256 of the raw
    body with the endpoint's secret (receivers check it with hmac.compare_digest: see
    docs/webhooks.md)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Outcome:
    status_code: int | None  # None when no answer came (refused address, timeout, reset)
    error: str
    response: str
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float):
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float):
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address
        self._context = ssl.create_default_context()

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def webhook_post(
    *,
    url: str,
    body: bytes,
    headers: dict[str, str],
    secret: str,
    timeout: float,
    allowed: tuple[Network, ...],
) -> Outcome:
    """POST ``body`` signed with ``secret``; never raises for what the network or the receiver
    does: the outcome says what happened."""
    started = time.monotonic()

    def outcome(status_code: int | None, error: str = "", response: str = "") -> Outcome:
        elapsed = round((time.monotonic() - started) * 1000)
        return Outcome(status_code, error[:500], response[:RESPONSE_KEPT], elapsed)

    try:
        target = target_check(url, allowed)
    except AddressRefused as exc:
        return outcome(None, f"refused: {exc}")
    connection_class = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(target, timeout)
    sent = {
        **headers,
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Diffmark-Signature": signature(secret, body),
    }
    try:
        connection.request("POST", target.path, body=body, headers=sent)
        answer = connection.getresponse()
        text = answer.read(RESPONSE_KEPT * 4).decode("utf-8", "replace")
        return outcome(answer.status, "" if 200 <= answer.status < 300 else answer.reason, text)
    except TimeoutError:
        return outcome(None, f"timed out after {timeout:g} s")
    except (OSError, http.client.HTTPException) as exc:
        return outcome(None, f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()

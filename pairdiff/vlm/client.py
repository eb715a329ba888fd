"""``VlmPredictor``: asks an OpenAI-compatible chat-completions endpoint (vLLM, SGLang)."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from pairdiff.geometry import Frame
from pairdiff.images import DEFAULT_LIMITS, ImageLimits, ImageRejected, inspect_image
from pairdiff.vlm.parse import parse_answer
from pairdiff.vlm.prompt import PROMPT_VERSION, chat_request
from pairdiff.vlm.result import VlmResult, excerpt, truncate_raw

# A chat completion is a few KB; anything far larger is not an answer worth holding in memory.
MAX_REPLY_BYTES = 8 * 1024 * 1024
_CHUNK = 64 * 1024
_VERSION_LENGTH = 100  # Prediction.model_version


class _Failure(Exception):
    """A failed exchange: ``reason`` for the result, ``raw`` what the server sent, if anything."""

    def __init__(self, reason: str, raw: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


@dataclass(frozen=True)
class _Reply:
    content: str
    finish_reason: str


class VlmPredictor:
    """A served vision-language model as a ``Predictor``.

    ``predict`` POSTs ``{base_url}/chat/completions`` (``base_url`` such as
    ``http://127.0.0.1:8000/v1``) with both images as data URLs of their original bytes and an
    instruction asking for JSON, then parses the answer with ``parse_answer``. ``timeout`` is a
    deadline in seconds for the whole exchange. Every failure (unreadable image, refused
    connection, timeout, HTTP error, malformed answer) comes back as ``error``, never raised.
    Proxy variables are not consulted: the model server is reached directly.
    """

    name = "vlm"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        version: str | None = None,
        image_limits: ImageLimits = DEFAULT_LIMITS,
        extra_body: Mapping[str, object] | None = None,
    ) -> None:
        """ValueError for a configuration that can never work (not http(s), no model...).

        ``extra_body`` is merged into each request for server-specific options, e.g.
        ``{"chat_template_kwargs": {"enable_thinking": False}}`` on vLLM.
        """
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url {base_url!r} must be an http:// or https:// URL")
        if not model.strip():
            raise ValueError("model must name the served model")
        if not timeout > 0:
            raise ValueError(f"timeout {timeout!r} must be a positive number of seconds")
        if max_tokens < 1:
            raise ValueError(f"max_tokens {max_tokens!r} must be at least 1")
        self.endpoint = base_url.strip().rstrip("/") + "/chat/completions"
        self.model = model.strip()
        self.api_key = api_key or None
        self.timeout = float(timeout)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.image_limits = image_limits
        self.extra_body = dict(extra_body or {})
        # The prompt is part of the version: a rerun with another prompt keeps both answers.
        self.version = version or f"{self.model} prompt-{PROMPT_VERSION}"[-_VERSION_LENGTH:]

    def __repr__(self) -> str:
        # Never show the key.
        return f"VlmPredictor({self.endpoint!r}, model={self.model!r})"

    def predict(
        self,
        image_a: bytes,
        image_b: bytes,
        *,
        categories: Sequence[str],
        instruction: str = "",
    ) -> VlmResult:
        """Ask the model about A and B; problems are recorded in the result, never raised."""
        try:
            return self._predict(image_a, image_b, list(categories), instruction)
        except Exception as exc:  # the protocol promises a result; a bug must not sink a job
            return VlmResult(error=f"vlm predictor failed: {type(exc).__name__}: {exc}")

    def _predict(
        self, image_a: bytes, image_b: bytes, categories: list[str], instruction: str
    ) -> VlmResult:
        sides = []
        for label, data in (("A", image_a), ("B", image_b)):
            try:
                info = inspect_image(data, self.image_limits)
            except ImageRejected as exc:
                return VlmResult(error=f"image {label} cannot be sent: {exc}")
            sides.append((data, info.mime_type, Frame(info.width, info.height)))
        (data_a, mime_a, frame_a), (data_b, mime_b, frame_b) = sides
        body = chat_request(
            model=self.model,
            image_a=(data_a, mime_a),
            image_b=(data_b, mime_b),
            categories=categories,
            edit_instruction=instruction,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            extra_body=self.extra_body,
        )
        try:
            reply = self._ask(json.dumps(body).encode("utf-8"))
        except _Failure as failure:
            return VlmResult(error=failure.reason, raw=truncate_raw(failure.raw))
        result = parse_answer(reply.content, frame_a, frame_b, categories)
        if reply.finish_reason == "length" and result.error:
            hint = f" (the model stopped at max_tokens={self.max_tokens}; raise it)"
            result = replace(result, error=result.error + hint)
        return result

    # HTTP --------------------------------------------------------------------------------------

    def _ask(self, payload: bytes) -> _Reply:
        status, reason, text = self._post(payload)
        if not 200 <= status < 300:
            hint = {
                401: " (check the API key)",
                403: " (check the API key)",
                404: " (check the base URL and the model name)",
            }.get(status, "")
            raise _Failure(f"HTTP {status} {reason}{hint}: {excerpt(text) or '(empty body)'}", text)
        try:
            envelope = json.loads(text)
        except json.JSONDecodeError:
            raise _Failure(f"the server's reply is not JSON: {excerpt(text)!r}", text) from None
        except RecursionError:  # nested past what the parser can walk: as unreadable
            raise _Failure("the server's reply is JSON nested too deeply to read", text) from None
        return _reply(envelope, text)

    def _post(self, payload: bytes) -> tuple[int, str, str]:
        """POST within the deadline; (status, reason, body text), or _Failure."""
        parts = urlsplit(self.endpoint)
        deadline = time.monotonic() + self.timeout
        connection_class = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        assert parts.hostname, "__init__ refuses an endpoint without a host"
        connection = connection_class(parts.hostname, parts.port, timeout=self.timeout)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "diffmark-vlm/1",
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
        try:
            connection.request("POST", path, body=payload, headers=headers)
            # Kept aside: the connection forgets its socket once a reply says "close".
            sock = connection.sock
            _set_deadline(sock, deadline)
            response = connection.getresponse()
            chunks, size = [], 0
            while True:
                # The socket timeout alone bounds each read, not the whole reply: a server
                # trickling bytes would never time out. Each read gets what is left.
                _set_deadline(sock, deadline)
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise _Failure(f"the server's reply is larger than {MAX_REPLY_BYTES} bytes")
                chunks.append(chunk)
            text = b"".join(chunks).decode("utf-8", errors="replace")
            return response.status, response.reason, text
        except TimeoutError:
            raise _Failure(f"no complete answer from {where} within {self.timeout:g} s") from None
        except ConnectionRefusedError:
            raise _Failure(
                f"connection refused by {where} (is the model server running?)"
            ) from None
        except ssl.SSLError as exc:
            raise _Failure(f"TLS error with {where}: {exc}") from None
        except (http.client.HTTPException, ConnectionError) as exc:
            raise _Failure(
                f"broken HTTP exchange with {where}: {type(exc).__name__}: {exc}"
            ) from None
        except OSError as exc:  # DNS failures, unreachable networks
            raise _Failure(f"cannot reach {where}: {exc}") from None
        finally:
            connection.close()


def _set_deadline(sock: socket.socket | None, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    if sock is not None:
        sock.settimeout(remaining)


def _reply(envelope: object, text: str) -> _Reply:
    """The first choice's text and finish reason from a chat-completions body, or _Failure."""
    if isinstance(envelope, Mapping) and envelope.get("error"):
        error = envelope["error"]
        message = error.get("message", error) if isinstance(error, Mapping) else error
        raise _Failure(f"the server reported an error: {excerpt(str(message))}", text)
    choices = envelope.get("choices") if isinstance(envelope, Mapping) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(choice, Mapping) or not isinstance(message, Mapping):
        raise _Failure(f"the server's reply has no choices[0].message: {excerpt(text)!r}", text)
    content = message.get("content")
    if isinstance(content, list):  # some servers answer in parts, like the request
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    finish = str(choice.get("finish_reason") or "")
    if not isinstance(content, str) or not content.strip():
        # Reasoning models served with a reasoning parser put their thoughts apart; an
        # answer that ran out of tokens while thinking has no content at all.
        thinking = " (the model only reasoned)" if message.get("reasoning_content") else ""
        stop = f"; finish_reason={finish}" if finish else ""
        raise _Failure(f"the model's answer is empty{thinking}{stop}", text)
    return _Reply(content, finish)

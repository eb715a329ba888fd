"""HTTPS deliveries go to the checked address and still verify the certificate for the URL's
host name (SNI and hostname check), with a CA made here and a name resolved by the test."""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from webhooks.addresses import networks_parse
from webhooks.sending import webhook_post

HOST = "hooks.example.test"


def _cert(name: str, issuer_key, issuer_name, *, ca: bool):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name or subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), False)
    cert = builder.sign(issuer_key or key, hashes.SHA256())
    return key, cert


def _pem(key, cert) -> tuple[bytes, bytes]:
    return (
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        cert.public_bytes(serialization.Encoding.PEM),
    )


@pytest.fixture
def tls(tmp_path, monkeypatch):
    """A CA the sender trusts, and a function serving HTTPS on 127.0.0.1 with a certificate for
    the given name; HOST resolves to 127.0.0.1."""
    ca_key, ca_cert = _cert("Test CA", None, None, ca=True)
    trusted = ssl.create_default_context(cadata=_pem(ca_key, ca_cert)[1].decode())
    monkeypatch.setattr("webhooks.sending.ssl.create_default_context", lambda: trusted)
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, port, *a, **kw: (
            [(2, 1, 6, "", ("127.0.0.1", port))] if host == HOST else real(host, port, *a, **kw)
        ),
    )
    servers = []

    def serve(name: str) -> int:
        key, cert = _cert(name, ca_key, ca_cert.subject, ca=False)
        key_pem, cert_pem = _pem(key, cert)
        (tmp_path / f"{name}.key").write_bytes(key_pem)
        (tmp_path / f"{name}.pem").write_bytes(cert_pem)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tmp_path / f"{name}.pem", tmp_path / f"{name}.key")

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server.server_address[1]

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def _post(port: int):
    return webhook_post(
        url=f"https://{HOST}:{port}/hook",
        body=b"{}",
        headers={},
        secret="s",
        timeout=5,
        allowed=networks_parse("127.0.0.1/32"),
    )


def test_https_to_the_checked_address_verifies_the_url_s_name(tls):
    outcome = _post(tls(HOST))
    assert (outcome.status_code, outcome.error) == (204, "")


def test_a_certificate_for_another_name_is_refused(tls):
    outcome = _post(tls("elsewhere.example.test"))
    assert outcome.status_code is None
    assert "CERTIFICATE_VERIFY_FAILED" in outcome.error and "Hostname mismatch" in outcome.error

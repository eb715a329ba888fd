"""Which addresses a webhook may reach: the public internet only, unless the deployment allows
more (DIFFMARK_WEBHOOK_ALLOWED_NETWORKS, comma-separated CIDRs, for on-premises receivers).

A URL is checked when it is registered and again at every send, on the addresses its host
resolves to then; the sender connects to the very address checked (webhooks.sending), so a
name that resolved to a public address at registration and to 127.0.0.1 later (DNS
rebinding) is refused at send time.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class AddressRefused(ValueError):
    """The URL is malformed, does not resolve, or resolves to an address webhooks may not reach."""


@dataclass(frozen=True)
class Target:
    """Where a send goes: the URL's parts and the checked address to connect to."""

    scheme: str
    host: str
    port: int
    path: str  # with its query
    address: str


def networks_parse(raw: str | Iterable[str]) -> tuple[Network, ...]:
    """CIDRs from the setting; ValueError names a bad one."""
    items = raw.split(",") if isinstance(raw, str) else raw
    found = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        try:
            found.append(ipaddress.ip_network(item, strict=False))
        except ValueError as exc:
            raise ValueError(f"not a network in CIDR form: {item!r}") from exc
    return tuple(found)


def address_refusal(address: IPAddress, allowed: tuple[Network, ...]) -> str | None:
    """Why webhooks may not reach ``address``; None when they may. Anything that is not a
    global unicast address is refused: loopback, private, link-local (169.254.169.254, the
    cloud metadata service, among them), carrier-grade NAT (100.100.100.200, another metadata
    service), unique-local IPv6 (fd00:ec2::254), reserved, unspecified and multicast."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if any(address in network for network in allowed):
        return None
    if address.is_loopback:
        return f"{address} is a loopback address"
    if address.is_link_local:
        return f"{address} is a link-local address (cloud metadata lives there)"
    if address.is_private:
        return f"{address} is a private address"
    if address.is_multicast or not address.is_global:
        return f"{address} is not a public address"
    return None


def url_parts(url: str) -> tuple[str, str, int, str]:
    """Scheme, host, port and path of an http(s) URL; AddressRefused when it is not one."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise AddressRefused(f"not a valid URL: {exc}") from exc
    if parts.scheme not in ("http", "https"):
        raise AddressRefused("the URL must start with http:// or https://")
    if not parts.hostname:
        raise AddressRefused("the URL has no host")
    if parts.username or parts.password:
        raise AddressRefused("put no user name or password in the URL; use the secret")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to now (a literal address is its own)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise AddressRefused(f"{host} does not resolve: {exc}") from exc
    # scope ids (fe80::1%eth0) are dropped: link-local is refused whatever the interface
    return list(
        dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos)
    )


def target_check(url: str, allowed: tuple[Network, ...]) -> Target:
    """The address to send ``url`` to, every address of its host having been checked (one bad
    address refuses the host: the connection could go to any of them)."""
    scheme, host, port, path = url_parts(url)
    addresses = resolve(host, port)
    if not addresses:
        raise AddressRefused(f"{host} does not resolve")
    for address in addresses:
        refusal = address_refusal(address, allowed)
        if refusal is not None:
            where = refusal if str(address) == host else f"{host} resolves to {refusal}"
            raise AddressRefused(
                f"{where}; webhooks go to public addresses only "
                "(DIFFMARK_WEBHOOK_ALLOWED_NETWORKS allows others)"
            )
    return Target(scheme=scheme, host=host, port=port, path=path, address=str(addresses[0]))

"""Where a team's tool URL may lead: public addresses, or a host the organisers allow-listed.

A worker sits inside the organiser's networks (its loopback, a cloud's
metadata service at 169.254.169.254, the database's private address), so a
tool URL a team gives must not lead there. An address is *internal* when it
is not globally routable (loopback, link-local, private and shared ranges,
unspecified, reserved, site-local) or is multicast, an IPv6 address also when
the IPv4 address it carries (IPv4-mapped ``::ffff:a.b.c.d``, 6to4, NAT64) is.
A host name counts by every address it resolves to, so ``localhost`` or a
name pointing at 10.0.0.5 is refused like the address.

The check runs twice: when the URL is submitted (:func:`check_team_url`), and
for every connection the worker makes (:class:`GuardedTransport`), which
resolves the name itself, checks every address, and connects to the checked
one — a name that resolved to a public address at submission and to an
internal one afterwards (DNS rebinding) reaches nothing. A refusal says the
same whatever the reason (internal, or not resolving at all), so that it
tells nothing of the organiser's network or resolver.

A queue's ``tool_hosts`` (``host`` or ``host:port``, set with
``nlpbench submissions queue NAME --tool-host``) are exempt: the organisers
vouch for them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable

import httpx

from nlpbench.errors import InputError, Kind, NlpbenchError

#: The one line every refusal of a team's tool address gives.
REFUSED = (
    "the tool URL's host must resolve to public addresses only (not loopback, link-local or private ones), "
    "unless the organisers allow-list it"
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(NlpbenchError):
    """A team's tool address is internal, or does not resolve; always :data:`REFUSED`."""

    kind = Kind.forbidden

    def __init__(self) -> None:
        super().__init__(REFUSED)


def internal(address: Address) -> bool:
    """Whether ``address`` (or the IPv4 address an IPv6 one carries) is not a public unicast address."""
    carried: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        carried += [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
        if address in _NAT64:
            carried.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return any(
        not a.is_global or a.is_multicast or a.is_reserved or getattr(a, "is_site_local", False) for a in carried
    )


def host_entry(entry: str) -> str:
    """An allow-list entry ``HOST`` or ``HOST:PORT`` (``[V6]:PORT``) in its one spelling (:func:`_spelled`)."""
    found = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?|([A-Za-z0-9.-]+)(?::(\d{1,5}))?", entry.strip())
    if found is None:
        try:  # a bare IPv6 address
            return _spelled(str(ipaddress.IPv6Address(entry.strip())))
        except ValueError:
            raise InputError(f"{entry[:80]!r} is not HOST or HOST:PORT", record="--tool-host") from None
    v6, v6_port, host, port = found.groups()
    try:
        host = _spelled(v6 or host)
    except ValueError:
        raise InputError(f"{entry[:80]!r} is not HOST or HOST:PORT", record="--tool-host") from None
    port = v6_port or port
    if port is not None and not 0 < int(port) < 65536:
        raise InputError(f"{entry[:80]!r}: port {port} is not one", record="--tool-host")
    return host if port is None else f"{host}:{int(port)}"


def _spelled(host: str) -> str:
    """A host as allow-lists spell it: an address in its short form (IPv6 in brackets), a name in lower case
    without a final dot."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if host.startswith("[") or not host.strip("."):
            raise
        return host.lower().rstrip(".")
    return f"[{address}]" if address.version == 6 else str(address)


def allow_listed(url: str, hosts: Iterable[str]) -> bool:
    """Whether the host of ``url`` (with its port, or any port) is one of ``hosts`` (:func:`host_entry` spellings)."""
    parsed = httpx.URL(url)
    try:
        host = _spelled(parsed.host)
    except ValueError:  # a host no entry can spell: not allow-listed
        return False
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return bool({host, f"{host}:{port}"} & set(hosts))


def check_team_url(url: str) -> None:
    """At submission: :class:`Refused` unless the host of ``url`` resolves, to public addresses only."""
    parsed = httpx.URL(url)
    try:
        found = socket.getaddrinfo(parsed.host, parsed.port or 80, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Refused() from None
    _public([str(entry[4][0]) for entry in found])


def _public(addresses: list[str]) -> str:
    """The first of ``addresses`` when there is one and none is internal; else :class:`Refused`."""
    parsed = [ipaddress.ip_address(a.split("%", 1)[0]) for a in addresses]
    if not parsed or any(internal(a) for a in parsed):
        raise Refused()
    return str(parsed[0])


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that connects only to public addresses: each host is resolved here once, every
    address it has checked, and the request sent to the checked address (the name still in ``Host`` and,
    over TLS, in SNI and the certificate check), so that no later answer of a resolver is used.

    A refused host is an :class:`httpx.ConnectError` saying :data:`REFUSED`, as any unreachable host is.
    """

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._pinned: dict[tuple[str, int], str] = {}

    async def _address(self, host: str, port: int) -> str:
        if (host, port) not in self._pinned:
            try:
                found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
                self._pinned[(host, port)] = _public([str(entry[4][0]) for entry in found])
            except (OSError, UnicodeError, Refused):
                raise httpx.ConnectError(REFUSED) from None
        return self._pinned[(host, port)]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        address = await self._address(host, request.url.port or (443 if request.url.scheme == "https" else 80))
        if address != host:
            request.url = request.url.copy_with(host=address)
            request.extensions = {**request.extensions, "sni_hostname": host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()

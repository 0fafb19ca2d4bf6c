"""Where the tag view is reached from: the absolute address its links and feeds use.

Behind a TLS-terminating proxy the server sees plain HTTP from the proxy's address, so
the request alone says ``http://`` and whatever host the request named. The tag view
therefore builds absolute URLs (feed ``self`` links, guide links in feeds and
``tags.json``) from, in order:

1. the public URL setting (``PRGUIDE_PUBLIC_URL``, e.g. ``https://prguide.example.com``):
   always, whatever the request says;
2. else, for a request whose peer is a trusted proxy (``PRGUIDE_TRUSTED_PROXIES``), the
   scheme and host that proxy forwarded (``Forwarded: proto=...;host=...``, RFC 7239, or
   ``X-Forwarded-Proto``/``X-Forwarded-Host``); where a header lists several values,
   the last one is used: the one the nearest proxy added;
3. else the request's own scheme and ``Host``.

Forwarded headers from any other peer are ignored: anyone can send them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

#: A network the trusted proxies live in (an address is a network of one).
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# host, or host:port; IPv6 literals in brackets. Nothing that could end the URL's authority.
_HOST_RE = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$")
_PAIR_RE = re.compile(r'\s*([A-Za-z]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;,\s]*)\s*')


def parse_public_url(text: str | None) -> str | None:
    """``text`` as a public base URL without the trailing ``/``, or ``None`` when empty.

    Raises :class:`ValueError` (naming what is wrong) unless it is an absolute
    ``http``/``https`` URL without query, fragment or user info. A path is kept: it is
    the prefix a proxy serves the tag view under (``https://example.com/prguide``).
    """
    text = (text or "").strip()
    if not text:
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ValueError(f"must be an http(s) URL such as https://prguide.example.com, got {text!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http(s) URL such as https://prguide.example.com, got {text!r}")
    if parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError(f"must be a plain address without query, fragment or user name, got {text!r}")
    return text.rstrip("/")


def parse_trusted_proxies(text: str | None) -> tuple[Network, ...]:
    """The proxies named in ``text``: addresses or networks (``10.0.0.0/8``), separated by commas or spaces.

    Raises :class:`ValueError` naming the first item that is neither.
    """
    networks = []
    for item in re.split(r"[,\s]+", (text or "").strip()):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not an IP address or network (such as 10.0.0.5 or 10.0.0.0/8)") from None
    return tuple(networks)


def trusted(remote: str | None, proxies: Iterable[Network]) -> bool:
    """Whether the peer address ``remote`` lies in one of ``proxies`` (``False`` for ``None`` or a socket path)."""
    if not remote:
        return False
    try:
        address = ipaddress.ip_address(remote.split("%", 1)[0])
    except ValueError:
        return False
    return any(address.version == network.version and address in network for network in proxies)


def forwarded(headers: Mapping[str, str]) -> tuple[str | None, str | None]:
    """``(scheme, host)`` a proxy forwarded in ``headers``, each ``None`` when absent or unusable.

    ``Forwarded`` (RFC 7239) wins over ``X-Forwarded-Proto``/``X-Forwarded-Host``; in
    each, the last element counts. A scheme other than ``http``/``https`` or a host that
    is not ``name[:port]`` is ignored.
    """
    scheme = host = None
    if headers.get("Forwarded"):
        last = headers["Forwarded"].split(",")[-1]
        pairs = {key.lower(): value.strip('"') for key, value in _PAIR_RE.findall(last)}
        scheme, host = pairs.get("proto"), pairs.get("host")
    if scheme is None and headers.get("X-Forwarded-Proto"):
        scheme = headers["X-Forwarded-Proto"].split(",")[-1].strip()
    if host is None and headers.get("X-Forwarded-Host"):
        host = headers["X-Forwarded-Host"].split(",")[-1].strip()
    scheme = scheme.lower() if scheme and scheme.lower() in ("http", "https") else None
    host = host if host and _HOST_RE.match(host) else None
    return scheme, host


def origin(
    *, public_url: str | None, proxies: Iterable[Network], remote: str | None, scheme: str, host: str,
    headers: Mapping[str, str],
) -> str:
    """``scheme://host[:port]`` a request's absolute links start with (their paths carry :func:`path_prefix`).

    ``scheme``/``host`` are the request's own; ``remote`` its peer address; see the
    module docstring for the order.
    """
    if public_url:
        parts = urlsplit(public_url)
        return f"{parts.scheme}://{parts.netloc}"
    if trusted(remote, proxies):
        sent_scheme, sent_host = forwarded(headers)
        scheme, host = sent_scheme or scheme, sent_host or host
    return f"{scheme}://{host}"


def path_prefix(public_url: str | None) -> str:
    """The path a proxy serves the tag view under (``"/prguide"``), from the public URL; ``""`` for none."""
    return urlsplit(public_url).path.rstrip("/") if public_url else ""

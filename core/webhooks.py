"""Webhooks: where a job's final result may be POSTed, and how the POST is signed.

A producer names a `callback_url` (core.job_options checks its syntax); the worker that
finishes the job POSTs the result there (workers/webhooks.py). Two things are decided
here, for both sides:

- **Where.** `VETQ_WEBHOOK_ALLOW` lists the destinations a deployment accepts: host
  names (`hooks.example.com`), subdomains (`*.example.com`), addresses and networks
  (`203.0.113.7`, `10.20.0.0/16`), and `*`, any host whose addresses are public. A
  private, loopback, link-local or reserved address is reached only through an entry
  that names its host or covers its network, never through `*`. The producer checks
  the URL as written (no DNS: a host name is the worker's to resolve); the worker
  checks every address it is about to connect to (a name may resolve elsewhere by
  then: DNS rebinding).
- **How it is signed.** HMAC-SHA256 with `VETQ_WEBHOOK_SECRET` over
  `<timestamp>.<body>`, the timestamp (Unix seconds) sent beside it so a receiver can
  refuse an old request replayed (README, Webhooks); while `VETQ_WEBHOOK_PREVIOUS_SECRET`
  is set, a second signature with it, so a secret is rotated without a gap.

Pure logic: no sockets here."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from vetq.core.errors import ConfigError, InvalidInputError

if TYPE_CHECKING:
    from vetq.core.settings import VetqSettings

__all__ = [
    "ATTEMPT_HEADER",
    "DELIVERY_HEADER",
    "JOB_HEADER",
    "REPLAY_WINDOW_S",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "AllowList",
    "check_destination",
    "host_address",
    "origin_of",
    "require_callback_allowed",
    "sign",
    "signature_header",
    "verify",
]

SIGNATURE_HEADER = "X-Vetq-Signature"
TIMESTAMP_HEADER = "X-Vetq-Timestamp"
JOB_HEADER = "X-Vetq-Job-Id"
# The same for every attempt at one delivery: a receiver deduplicates by it (or by the job).
DELIVERY_HEADER = "X-Vetq-Delivery"
ATTEMPT_HEADER = "X-Vetq-Attempt"
SIGNATURE_VERSION = "v1"
# What the README tells receivers to accept: a request signed more than this long ago
# (or ahead) is refused as a replay. Every attempt is signed afresh, so a retry an hour
# later is not refused for its age.
REPLAY_WINDOW_S = 300
MIN_SECRET_CHARS = 16

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_HOST_NAME = re.compile(
    r"(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*"
)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """One signature: `v1=` and the hex HMAC-SHA256 of `<timestamp>.<body>`."""
    mac = hmac.new(secret.encode("utf-8"), f"{int(timestamp)}.".encode() + body, hashlib.sha256)
    return f"{SIGNATURE_VERSION}={mac.hexdigest()}"


def signature_header(secrets: Sequence[str], timestamp: int, body: bytes) -> str:
    """The signature header's value: one signature per secret, comma-separated, the
    current secret's first (two while a secret is rotated, one otherwise)."""
    return ", ".join(sign(secret, timestamp, body) for secret in secrets)


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: float | None = None,
    window_s: float = REPLAY_WINDOW_S,
) -> bool:
    """Whether a request carries vetq's signature of `body` with `secret`, made within
    `window_s` of `now` (what a receiver written in Python does; README, Webhooks). Any
    of the header's signatures may match: while vetq's secret is rotated it sends one
    with the new secret and one with the old."""
    lowered = {name.lower(): value for name, value in headers.items()}
    timestamp = lowered.get(TIMESTAMP_HEADER.lower(), "")
    signature = lowered.get(SIGNATURE_HEADER.lower(), "")
    if not timestamp.isdigit():
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > window_s:
        return False
    expected = sign(secret, int(timestamp), body)
    return any(hmac.compare_digest(expected, part.strip()) for part in signature.split(","))


def host_address(text: str) -> Address | None:
    """The address a URL's host (or a socket's peer) is, or None for a name."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    # ::ffff:10.0.0.1 is 10.0.0.1 to the kernel: judged as the IPv4 address it maps.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_localhost(host: str) -> bool:
    # RFC 6761: these names are the loopback interface, whatever DNS would say.
    return host == "localhost" or host.endswith(".localhost")


@dataclass(frozen=True)
class AllowList:
    """VETQ_WEBHOOK_ALLOW, parsed (see the module's text)."""

    any_public: bool = False
    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[Network, ...] = field(default=())

    @classmethod
    def parse(cls, text: str) -> AllowList:
        """Comma-separated entries; ValueError naming the first that is none."""
        any_public, names, suffixes, networks = False, set(), [], []
        for raw in (text or "").split(","):
            entry = raw.strip().lower()
            if not entry:
                continue
            if entry == "*":
                any_public = True
            elif entry.startswith("*."):
                domain = entry[2:].rstrip(".")  # a fully qualified name's final dot
                if not _HOST_NAME.fullmatch(domain):
                    raise ValueError(f"{raw.strip()!r} is not *. and a domain")
                suffixes.append(f".{domain}")
            elif host_address(entry.strip("[]")) is not None or "/" in entry:
                try:
                    network = ipaddress.ip_network(entry.strip("[]"), strict=False)
                except ValueError:
                    raise ValueError(f"{raw.strip()!r} is not an address or a network such as 10.0.0.0/8") from None
                networks.append(network)
            elif _HOST_NAME.fullmatch(entry.rstrip(".")):
                names.add(entry.rstrip("."))
            else:
                raise ValueError(f"{raw.strip()!r} is not a host name, *.domain, an address, a network or *")
        return cls(any_public, frozenset(names), tuple(suffixes), tuple(networks))

    @property
    def empty(self) -> bool:
        return not (self.any_public or self.names or self.suffixes or self.networks)

    def names_host(self, host: str) -> bool:
        """Whether an entry names this host (not merely `*`)."""
        host = host.lower().rstrip(".")
        return host in self.names or any(host.endswith(suffix) for suffix in self.suffixes)

    def covers(self, address: Address) -> bool:
        return any(address.version == network.version and address in network for network in self.networks)

    def allows_address(self, address: Address, *, host_named: bool) -> bool:
        """Whether a connection may go to `address`: inside a listed network; any
        address of a host an entry names (its operator vouched for it) but none that
        is not a host at all; or, under `*`, a public one."""
        unmapped = host_address(str(address)) or address
        if self.covers(unmapped):
            return True
        if unmapped.is_unspecified or unmapped.is_multicast:
            return False
        if host_named:
            return True
        return self.any_public and unmapped.is_global


def origin_of(url: str) -> str:
    """`scheme://host:port` of a URL: what logs and dead letters name. Never the path or
    the query, which often carry the receiver's own token."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = 0
    return f"{parts.scheme}://{host}:{port}"


def check_destination(url: str, allow: AllowList) -> str | None:
    """Why `url` may not be a callback under `allow` as written (None: it may). No DNS:
    an address is judged here, a name by the entries; the worker judges the addresses
    a name resolves to when it connects."""
    host = (urlsplit(url).hostname or "").rstrip(".")
    address = host_address(host)
    if address is not None:
        if allow.allows_address(address, host_named=False):
            return None
        if address.is_global:
            return f"{host} is not in VETQ_WEBHOOK_ALLOW"
        return f"{host} is a private, loopback, link-local or reserved address that VETQ_WEBHOOK_ALLOW does not list"
    if allow.names_host(host):
        return None
    if _is_localhost(host):
        return f"{host} is the loopback interface, which VETQ_WEBHOOK_ALLOW does not name"
    if allow.any_public:
        return None
    return f"{host} is not in VETQ_WEBHOOK_ALLOW"


def require_callback_allowed(url: str | None, settings: VetqSettings) -> None:
    """The producer's check of a checked callback_url: a deployment without a secret
    refuses it (CONFIG_ERROR: never sent unsigned), a destination the allow-list does
    not accept is INVALID_INPUT naming callback_url."""
    if url is None:
        return
    if settings.webhook_secret is None:
        raise ConfigError(
            "callback_url needs VETQ_WEBHOOK_SECRET, the key results are signed with (README, Webhooks): "
            "set it on producers and workers; results are never POSTed unsigned"
        )
    problem = check_destination(url, settings.webhook_allow_list())
    if problem is not None:
        raise InvalidInputError(f"callback_url is not allowed: {problem} (README, Webhooks)")

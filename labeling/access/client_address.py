"""The client's address: the connection's peer, or the one the trusted proxy in front reports.

Behind the shipped nginx (deploy/nginx.conf) every request reaches gunicorn from the proxy,
which sets ``X-Forwarded-For`` to the address it talked to (``$remote_addr``: one value,
whatever the client sent). Django believes that header from exactly one hop: a connection
whose peer is in ``STEPMARK_TRUSTED_PROXIES``. Any other peer is the client itself and the
header it sent is ignored, so a client that reaches gunicorn directly cannot pick its own
address. The middleware writes the answer into ``REMOTE_ADDR``: login lockouts (axes),
throttles (DRF, ``NUM_PROXIES = 0``) and logs all read that one value.
"""
import ipaddress
import socket
import time

from django.conf import settings

# How often (seconds) a process looks a trusted proxy's host name up again when a peer it does
# not know connects: the compose proxy's address changes when its container is recreated.
RESOLVE_EVERY = 10.0


class TrustedProxies:
    """Addresses, networks (``10.0.0.0/8``) and host names (``proxy``) whose word is believed."""

    def __init__(self, entries, *, resolve_every=RESOLVE_EVERY):
        self.networks, self.names = [], []
        for entry in entries:
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.names.append(entry)
        self.resolve_every = resolve_every
        self.resolved, self.resolved_at = frozenset(), None

    def __bool__(self):
        return bool(self.networks or self.names)

    def __contains__(self, peer):
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        if any(address in network for network in self.networks):
            return True
        if not self.names:
            return False
        if address in self.resolved:
            return True
        # An unknown peer: the proxy may have a new address (a recreated container).
        now = time.monotonic()
        if self.resolved_at is None or now - self.resolved_at >= self.resolve_every:
            self.resolved, self.resolved_at = self._resolve(), now
        return address in self.resolved

    def _resolve(self):
        found = set()
        for name in self.names:
            try:
                infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
            except (socket.gaierror, UnicodeError):
                continue  # not up yet (compose starts the proxy after the web process)
            found.update(ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos)
        return frozenset(found)


def client_address(meta, proxies):
    """The client's address for a request's ``META``: one hop of ``X-Forwarded-For`` from a trusted proxy."""
    peer = meta.get("REMOTE_ADDR", "")
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if not forwarded or not proxies or peer not in proxies:
        return peer
    # The value the proxy itself wrote is the last one; anything before it came from the client.
    candidate = forwarded.rsplit(",", 1)[-1].strip()
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return peer


class ClientAddressMiddleware:
    """Sets ``REMOTE_ADDR`` to the client's address (first in MIDDLEWARE: everything after reads it)."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.proxies = TrustedProxies(settings.STEPMARK_TRUSTED_PROXIES)

    def __call__(self, request):
        request.META["REMOTE_ADDR"] = client_address(request.META, self.proxies)
        return self.get_response(request)

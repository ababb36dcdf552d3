"""What keeps a referee on the network usable by real bots: long tokens, failed token attempts
throttled per peer, and enough file descriptors (see docs/referee.md, "Limits").

No grpc here: the server applies these at its edge (``server.py``); its config (``config.py``: the file and
``serve``'s flags) checks tokens with :func:`token_problem` and :func:`check_token` as it reads them.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

log = logging.getLogger(__name__)

#: Configured tokens (``serve --token``, a serve config's ``tokens`` and ``control_token``, a tournament's
#: ``remote`` bots) need at least this many characters: short ones can be guessed over the network.
MIN_TOKEN_CHARS: Final = 16
MAX_TOKEN_CHARS: Final = 200
#: The one command the messages give for making a good token.
MAKE_TOKEN: Final = 'python3 -c "import secrets; print(secrets.token_urlsafe(24))"'


def token_problem(token: str) -> str | None:
    """Why ``token`` cannot be a configured token (None: it can); one sentence that says how to make one."""
    if not token or any(not "!" <= ch <= "~" for ch in token):
        return f"expected printable characters without spaces; make one with: {MAKE_TOKEN}"
    if len(token) < MIN_TOKEN_CHARS:
        return (
            f"a token of {len(token)} characters is too short to be safe on a network: use at least "
            f"{MIN_TOKEN_CHARS}; make one with: {MAKE_TOKEN}"
        )
    if len(token) > MAX_TOKEN_CHARS:
        return f"a token of {len(token)} characters is over the limit of {MAX_TOKEN_CHARS}"
    return None


def check_token(token: str, what: str) -> str:
    """``token`` if it is a good configured token, else ValueError ``WHAT: why; how to make one``."""
    problem = token_problem(token)
    if problem is not None:
        raise ValueError(f"{what}: {problem}")
    return token


# ---------------------------------------------------------------------- file descriptors

#: Descriptors a referee keeps for itself (its store, records, logs, bot processes' pipes) beyond
#: its network connections: the default connection cap is the descriptor limit less this (less
#: half the limit when the limit is under twice this).
RESERVED_FDS: Final = 1024
#: The connection cap never goes below this (a machine with a tiny descriptor limit still serves a few bots).
MIN_CONNECTIONS: Final = 64


def raise_open_files_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; return the soft limit now in force.

    A referee holds a descriptor per connection and per bot pipe; the usual soft
    limit (1024) is reached by a few hundred idle connections, the hard one
    rarely. Where rlimits do not exist (not POSIX), returns a large number.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return 1 << 20
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != resource.RLIM_INFINITY and soft >= hard:
        return int(soft)
    target = hard
    if target == resource.RLIM_INFINITY:  # some kernels refuse infinity for NOFILE: take nr_open's value
        try:
            with open("/proc/sys/fs/nr_open", encoding="ascii") as f:
                target = int(f.read().strip())
        except (OSError, ValueError):
            target = 1 << 20
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:
        log.debug("could not raise RLIMIT_NOFILE from %s to %s: %s", soft, target, exc)
        return int(soft)
    return int(target)


def default_max_connections(open_files: int) -> int:
    """The connection cap for a process allowed ``open_files`` descriptors: what leaves it its reserve
    (:data:`RESERVED_FDS`, or half the limit when that is under twice the reserve)."""
    return max(MIN_CONNECTIONS, open_files - min(RESERVED_FDS, open_files // 2))


# ---------------------------------------------------------------------- failed token attempts


@dataclass(slots=True)
class _Bucket:
    allowance: float  # failed attempts this peer may still make at once
    at: float  # when allowance was last brought up to date
    logged_until: float = 0.0  # a refusal was logged for this peer until then (one line per back-off)


def peer_key(peer: str, *, loopback: bool = False) -> str | None:
    """The address a peer's failures count against: its IPv4 address, or its IPv6 /64 network (one
    host usually has a whole /64). None for peers that are not throttled: not on TCP (``unix:``) or,
    unless ``loopback``, on a loopback address: local processes, such as a tournament's own bots,
    which one of them must not lock out by failing on purpose (their isolation is the sandbox's job)."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host = rest.rsplit(":", 1)[0].strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback and not loopback:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class PeerThrottle:
    """Failed token attempts per peer address, as a token bucket.

    Loopback peers are not throttled unless ``loopback`` (see :func:`peer_key`).
    Each peer may fail ``burst`` times at once; one more failure is allowed every
    ``refill_s`` seconds. A peer with no failure left is refused (every call,
    whatever its token: a good guess must not be told apart) until one is allowed
    again, and one warning line says so per back-off. Peers back to a full bucket
    are forgotten, and at most ``max_peers`` are remembered (the oldest go first).
    """

    def __init__(
        self,
        burst: int = 10,
        refill_s: float = 2.0,
        *,
        max_peers: int = 100_000,
        loopback: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.loopback = loopback
        self.refill_s = refill_s
        self.max_peers = max_peers
        self.clock = clock
        self._peers: dict[str, _Bucket] = {}
        self.refused = 0  # calls refused while backing off (for tests and logs)

    def _bucket(self, key: str, now: float) -> _Bucket | None:
        bucket = self._peers.get(key)
        if bucket is None:
            return None
        if self.refill_s > 0:
            bucket.allowance = min(float(self.burst), bucket.allowance + (now - bucket.at) / self.refill_s)
        else:
            bucket.allowance = float(self.burst)
        bucket.at = now
        if bucket.allowance >= self.burst and now >= bucket.logged_until:
            del self._peers[key]  # back to full: nothing to remember
            return None
        return bucket

    def wait_s(self, peer: str) -> float:
        """Seconds until ``peer`` may try a token again (0: now)."""
        key = peer_key(peer, loopback=self.loopback)
        if key is None:
            return 0.0
        bucket = self._bucket(key, self.clock())
        if bucket is None or bucket.allowance >= 1:
            return 0.0
        return (1 - bucket.allowance) * self.refill_s

    def check(self, peer: str) -> float:
        """Before a token is looked at: 0 if ``peer`` may try, else the seconds it must wait (counted, logged)."""
        wait = self.wait_s(peer)
        if wait > 0:
            self.refused += 1
            key = peer_key(peer, loopback=self.loopback)
            assert key is not None
            bucket = self._peers[key]
            now = self.clock()
            if now >= bucket.logged_until:
                bucket.logged_until = now + max(wait, self.refill_s)
                log.warning(
                    "too many failed token attempts from %s (%d at once, then one every %g s): "
                    "refusing its calls for %.1f s",
                    key,
                    self.burst,
                    self.refill_s,
                    wait,
                )
        return wait

    def failed(self, peer: str) -> None:
        """``peer`` sent a missing or unknown token."""
        key = peer_key(peer, loopback=self.loopback)
        if key is None:
            return
        now = self.clock()
        bucket = self._bucket(key, now)
        if bucket is None:
            if len(self._peers) >= self.max_peers:
                self._forget_oldest()
            bucket = self._peers[key] = _Bucket(float(self.burst), now)
        bucket.allowance -= 1

    def _forget_oldest(self) -> None:
        """Room for one more peer: the one remembered longest goes (O(1): a flood of addresses costs little)."""
        del self._peers[next(iter(self._peers))]

    def __len__(self) -> int:
        return len(self._peers)

"""Deals nobody can know in advance: a secret the operator holds, mixed into every deal's seed.

The dealing code is open and a league's seed is public, so without a secret any author can compute every deck
before the league plays. With one (``seed_secret_env: NAME`` or ``seed_secret_file: PATH`` in a tournament
config, ``--seed-secret-env NAME`` for a gate), each deal's match seed is an HMAC-SHA256 of the public seed, the
deal and the versions of the table's bots under the secret: a new version of a bot plays fresh deals, never the
deals of records already published. The match seed of a played game is in its record (so whoever has the
record replays it); the deals of games not yet played cannot be computed without the secret. Records and the
store carry the secret's id (an HMAC of a fixed text, not the secret), so its holder can tell which secret
dealt a game.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path
from typing import Final

from skyjo_ref.errors import UsageError

#: The shortest secret accepted: a secret short enough to guess protects nothing.
MIN_SECRET_CHARS: Final = 16


class SecretError(UsageError):
    """A secret that cannot be read or is too weak; the message says where and what is expected."""


def _mac(secret: str, text: str) -> str:
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


def secret_id(secret: str) -> str:
    """Which secret dealt (12 hex digits): tells secrets apart without revealing them."""
    return _mac(secret, "skyjo-ref secret id")[:12]


def secret_deal_seed(secret: str, seed: int | str, deal: int, salt: str = "") -> str:
    """The match seed of deal ``deal`` (every rotation of a table shares it; ``salt``: the table's version tag)."""
    return f"secret-{secret_id(secret)}/{_mac(secret, f'{seed}/deal/{deal}/{salt}')[:32]}"


def secret_seed(secret: str, seed: str) -> str:
    """A gate's seed under a secret: its deals follow from it, and nobody without the secret can know it first."""
    return f"secret-{secret_id(secret)}-{_mac(secret, f'gate/{seed}')[:32]}"


def read_secret(env: str | None = None, file: Path | None = None) -> str:
    """The secret from environment variable ``env`` or from ``file`` (its text without the final newline)."""
    if env is not None:
        value = os.environ.get(env)
        if value is None or not value.strip():
            raise SecretError(f"environment variable {env} is not set: expected the secret that seeds the deals")
        where = f"environment variable {env}"
    elif file is not None:
        try:
            value = file.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise SecretError(
                f"cannot read {file}: {exc.strerror or exc}: expected the secret that seeds the deals"
            ) from None
        except UnicodeDecodeError:
            raise SecretError(f"{file} is not UTF-8 text: expected the secret that seeds the deals") from None
        where = str(file)
    else:
        raise SecretError("no secret named: expected an environment variable or a file")
    if len(value) < MIN_SECRET_CHARS:
        raise SecretError(
            f"the secret in {where} has {len(value)} characters: expected at least {MIN_SECRET_CHARS} "
            "(e.g. `openssl rand -hex 32`)"
        )
    return value

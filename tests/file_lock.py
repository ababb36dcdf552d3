"""A lock on a file, for work the tests share on disk (a build cache, a built binary).

pytest-xdist runs the suite in several worker processes, and two pytest runs may
share a checkout: a module's fixture then runs once per process, maybe at the
same time. Whoever takes the lock first builds; the others wait, then find the
work done (the build scripts skip what is up to date).
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block; released when the process dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

"""A listener on the host's loopback that counts who reaches it: what a bot without network must never do."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def loopback_listener() -> Iterator[tuple[int, list[object]]]:
    """``(port, accepted)``: connections accepted while the block runs land in ``accepted``."""
    accepted: list[object] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0.2)
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    accepted.append(listener.accept())
                except TimeoutError:
                    continue

        watcher = threading.Thread(target=accept, daemon=True)
        watcher.start()
        try:
            yield listener.getsockname()[1], accepted
        finally:
            stop.set()
            watcher.join()

"""No channel between two sandboxes: byte-range locks on a file both can read, and the uid's keyring.

Two isolated processes alive at once (as the processes playing two seatings of one deal are): one encodes 32
random bits (what it saw of a deal) in OFD locks on the SDK's ``__init__.py`` and in a key of its uid's keyring,
the other reads them back. Without the seccomp filter both channels carry every bit (the control: the test can
fail); with it, every lock and key call is refused, so nothing passes.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import skyjo_bot
from skyjo_ref.sandbox import isolation_problem
from skyjo_ref.sandbox.namespaces import SECCOMP_FD_SLOT, BotView, python_runtime, supervised

PROBE = Path(__file__).resolve().with_name("channel_probe.py")
SHARED = str(Path(skyjo_bot.__file__).resolve())

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"cannot isolate: {isolation_problem()}")


def sandboxed(argv: list[str], *, filtered: bool) -> list[str]:
    view = BotView(runtime=python_runtime(), binds=((PROBE, PROBE),), socket_dir=None, hidden=(), cwd=None)
    plan = view.plan()
    if not filtered:  # the control: the same sandbox without the filter
        slot = plan["isolate"].index(SECCOMP_FD_SLOT)
        del plan["isolate"][slot - 1 : slot + 1]
    return supervised({"parent": os.getpid(), **plan}, [sys.executable, str(PROBE), *argv])


def talk(filtered: bool) -> tuple[str, str, str]:
    """(the bits, what the holder said, what the looker saw)."""
    bits = format(secrets.randbits(32) | 1, "032b")
    tag = f"skyjo-channel-{uuid.uuid4().hex}"
    holder = subprocess.Popen(
        sandboxed(["hold", bits, SHARED, tag], filtered=filtered),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        held = holder.stdout.readline()  # the locks are set: the looker may look
        looked = subprocess.run(
            sandboxed(["look", "32", SHARED, tag], filtered=filtered), capture_output=True, text=True, timeout=60
        )
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    return bits, held, looked.stdout + looked.stderr


def test_without_the_filter_locks_carry_every_bit_between_sandboxes() -> None:
    bits, held, saw = talk(filtered=False)
    assert "locks set" in held, held
    assert f"locks {bits}" in saw, (bits, saw)


def test_with_the_filter_no_lock_and_no_key_is_set_or_read() -> None:
    bits, held, saw = talk(filtered=True)
    assert held.strip() == "held: locks refused (EPERM); key refused (EPERM)", held
    assert "locks refused (EPERM)" in saw and "key not found (EPERM)" in saw, saw
    assert bits not in saw


@pytest.mark.skipif(os.geteuid() != 0, reason="as root every isolated bot is uid 65534: one keyring for all")
def test_without_the_filter_the_shared_keyring_carries_a_note_between_sandboxes() -> None:
    bits, held, saw = talk(filtered=False)
    assert "key added" in held, held
    assert f"key {bits}" in saw, (bits, saw)

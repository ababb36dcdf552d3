"""A machine-wide shortage of processes or threads is one line naming the cause, never "internal error"."""

from __future__ import annotations

import errno

import pytest
from skyjo_ref.cli import errors


@pytest.mark.parametrize(
    "exc",
    [RuntimeError("can't start new thread"), BlockingIOError(errno.EAGAIN, "fork: Resource temporarily unavailable")],
)
def test_no_thread_or_process_left_is_one_line_and_unfinished(
    capsys: pytest.CaptureFixture[str], exc: BaseException
) -> None:
    code = errors.handle_unexpected(exc)
    err = capsys.readouterr().err
    assert code == errors.EXIT_UNFINISHED
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the machine is out of processes or threads ("), err
    assert "bot without a process cap" in err and "internal error" not in err


def test_another_runtime_error_is_still_reported_as_a_bug(capsys: pytest.CaptureFixture[str]) -> None:
    assert errors.handle_unexpected(RuntimeError("something else")) == 70
    assert "internal error" in capsys.readouterr().err

"""Suite-wide settings.

The suite runs in parallel on pytest-xdist workers (``addopts`` in pyproject.toml:
``-n auto --dist loadfile --no-loadscope-reorder``): each test file runs whole on
one worker, so a file's module fixtures run once. Files are handed out in the
order below, the slowest first, so that no worker is left with a long file at the
end while the others wait. Run in one process with ``-n 0`` (``--pdb`` does that by
itself); ``-p no:xdist`` works too, the xdist options in ``addopts`` are then
accepted and ignored.

A suite started in the background by a non-interactive shell (``cmd &``, as a
CI step or ``scripts/stress-tests`` may be) inherits SIGINT *ignored*, and so
would every CLI a test starts: the tests that press Ctrl-C would see nothing
happen. Python's default handler is put back here, in the controller and in each
worker, so the processes the tests start get SIGINT at its default.
"""

from __future__ import annotations

import signal

import pytest

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

#: The files that take longest (measured with --durations=0, most first); the others follow in their usual order.
SLOWEST_FIRST = (
    "test_sdk_rust.py",  # cold (a fresh clone): compiles tonic & co. once at opt-level 0, about 105 s of CPU
    "test_sdk_cpp.py",  # cold (a fresh clone): compiles grpc++ stubs and the SDK twice, about 120 s of CPU
    "test_tournament_run.py",
    "test_check_bot.py",  # about 4 min on one loaded worker: 2 full check-bot runs, 10 fault runs (little CPU)
    "test_dask_executor.py",
    "test_dask_match.py",
    "test_gate_cli.py",
    "test_new_bot.py",  # about 2 min: a project checked and played as its league runs it
    "test_sandbox.py",
    "test_sdk_go.py",
    "test_report.py",
    "test_replay_cli.py",
    "test_ci_output.py",
    "test_match_cli.py",
    "test_sprt.py",
    "test_ci_workflows.py",
    "test_shard_merge.py",
    "test_bot_failures.py",
    "test_in_process.py",
    "test_strong_bot.py",
    "test_tournament_config.py",
    "test_report_browser.py",
    "test_learning_env.py",
)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if pluginmanager.is_blocked("xdist"):  # -p no:xdist: addopts still says -n and --dist
        group = parser.getgroup("xdist", "xdist is disabled (-p no:xdist): these are ignored")
        # _addoption: a short lowercase option is reserved to plugins; xdist declares it the same way
        group._addoption("-n", "--numprocesses", dest="numprocesses", default=None, help="ignored")
        group.addoption("--dist", dest="dist", default="no", help="ignored")
        group.addoption("--no-loadscope-reorder", dest="loadscopereorder", action="store_false", help="ignored")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (a stable sort: tests keep their order within a file)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))

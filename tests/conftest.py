"""Suite-wide settings.

The suite runs in parallel on pytest-xdist workers (``addopts`` in pyproject.toml:
``-n auto --dist loadfile``): each test file runs whole on one worker, so a
file's module fixtures run once. Run in one process with ``-n 0`` (``--pdb``
does that by itself); ``-p no:xdist`` works too, the xdist options in
``addopts`` are then accepted and ignored.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if pluginmanager.is_blocked("xdist"):  # -p no:xdist: addopts still says -n and --dist
        group = parser.getgroup("xdist", "xdist is disabled (-p no:xdist): these are ignored")
        # _addoption: a short lowercase option is reserved to plugins; xdist declares it the same way
        group._addoption("-n", "--numprocesses", dest="numprocesses", default=None, help="ignored")
        group.addoption("--dist", dest="dist", default="no", help="ignored")

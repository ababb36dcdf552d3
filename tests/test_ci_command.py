"""CI runs what the docs promise: the README's test command, verbatim, with the linters and the strict type check."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^scripts/install-test-deps .*$", text, flags=re.MULTILINE)
    assert len(commands) == 1, commands
    return commands[0]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert _readme_test_command() in lines


def test_the_test_command_runs_ruff_mypy_and_pytest_and_its_extra_installs_them() -> None:
    steps = [step.strip() for step in _readme_test_command().split("&&")]
    for step in (".venv/bin/ruff check .", ".venv/bin/ruff format --check .", ".venv/bin/mypy"):
        assert step in steps, step
    assert steps[-1] == ".venv/bin/python -m pytest"
    assert '.venv/bin/pip install -e ".[test]"' in steps
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[]", requirement)[0].lower() for requirement in extra["test"]}
    assert {"ruff", "mypy", "types-protobuf", "types-pyyaml", "grpc-stubs"} <= names

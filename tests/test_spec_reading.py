"""One reading of a Python bot spec (skyjo_bot.loader.split_spec): the SDK runner, the command line, the tournament
config, the gate's fingerprint and a Dask worker's check all split ``file.py[:Name]`` / ``module:Name`` alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from skyjo_bot.loader import SpecParts, split_spec
from skyjo_ref.botfiles import python_target
from skyjo_ref.errors import BotSpecError, UsageError
from skyjo_ref.players import parse_bot_spec

BOT = (
    "from skyjo_bot import Bot\n\nclass Mine(Bot):\n    def decide(self, view):\n        return view.legal_actions[0]\n"
)


@pytest.mark.parametrize(
    ("spec", "parts"),
    [
        ("bot.py", SpecParts("bot.py", None, True)),
        ("bots/bot.py:Mine", SpecParts("bots/bot.py", "Mine", True)),
        ("pkg.mod:Mine", SpecParts("pkg.mod", "Mine", False)),
        ("C:\\bots\\x.py", SpecParts("C:\\bots\\x.py", None, True)),  # a drive colon is not a name
        ("a:b/c.py", SpecParts("a:b/c.py", None, True)),  # a name never holds a path separator
        ("  pkg.mod:Mine ", SpecParts("pkg.mod", "Mine", False)),
        ("pkg.mod", SpecParts("pkg.mod", None, False)),
    ],
)
def test_split_spec(spec: str, parts: SpecParts) -> None:
    assert split_spec(spec) == parts


def test_the_referee_reads_a_spec_as_the_sdk_runs_it(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(BOT, encoding="utf-8")
    spec = parse_bot_spec(f"{bot}:Mine")
    assert spec.python == f"{bot.resolve()}:Mine" and spec.name == "Mine"
    assert split_spec(spec.python) == SpecParts(str(bot.resolve()), "Mine", True)
    assert python_target(spec.python) == bot.resolve()


def test_a_bad_spec_is_one_error_of_both_sides_and_a_usage_error(tmp_path: Path) -> None:
    """The referee's BotSpecError is the SDK loader's too (one except catches both) and exits 2."""
    from skyjo_bot.loader import BotSpecError as LoaderSpecError

    with pytest.raises(BotSpecError) as caught:
        parse_bot_spec(str(tmp_path / "missing.py:Mine"))
    assert isinstance(caught.value, LoaderSpecError) and isinstance(caught.value, UsageError)
    assert caught.value.exit_code == 2

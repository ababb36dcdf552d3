"""The up-front bot file check (skyjo_ref.botcheck): a file named without ``:Class`` must hold one bot, as the
SDK's loader will look for it. Refused only when the text makes it certain; the loader agrees on each case."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from skyjo_bot.loader import BotSpecError, load_bot
from skyjo_ref.botcheck import BotFileError, bots_defined, check_bot_file

HEAD = "from skyjo_bot import Bot, bot\nimport skyjo_bot\nimport skyjo_bot.bot\nimport random\n\n\n"
DECIDE = "    def decide(self, view):\n        return view.legal_actions[0]\n"

#: file text -> the bots the check finds, and whether it leaves the file to its process (cannot be sure)
CASES = {
    "one class": (f"class Mine(Bot):\n{DECIDE}", ["Mine"], False),
    "the module's Bot": (f"class Mine(skyjo_bot.Bot):\n{DECIDE}\n\nclass Two(skyjo_bot.Bot):\n{DECIDE}",
                         ["Mine", "Two"], False),
    "a decorated function": ("@bot\ndef mine(view):\n    return view.legal_actions[0]\n", ["mine"], False),
    "a subclass too": (f"class Base(Bot):\n{DECIDE}\n\nclass Mine(Base):\n    pass\n", ["Base", "Mine"], False),
    "an instance": (f"class Mine(Bot):\n{DECIDE}\n\nplayer = Mine()\n", ["Mine", "player"], False),
    "private names": (f"class _Base(Bot):\n{DECIDE}\n\nclass Mine(_Base):\n    pass\n", ["Mine"], False),
    "no bot": ("import random\nWEIGHTS = [1, 2]\nrng = random.Random(3)\n\n\ndef decide(view):\n    return 1\n",
               [], False),
    "a main guard": (f"class Mine(Bot):\n{DECIDE}\n\nif __name__ == '__main__':\n    x = Mine()\n", ["Mine"], False),
    "a base from elsewhere": ("from mylib import BaseBot\n\n\nclass Mine(BaseBot):\n    pass\n", [], True),
    "a local factory": ("def make():\n    return None\n\n\nplayer = make()\n", [], True),
    "a guarded import": ("try:\n    from skyjo_bot import Bot\nexcept ImportError:\n    Bot = object\n"
                         f"\n\nclass Mine(Bot):\n{DECIDE}", ["Mine"], True),
    "a star import": ("from mylib import *\n", [], True),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_the_check_finds_the_bots_the_loader_finds(case: str, tmp_path: Path) -> None:
    text, bots, uncertain = CASES[case]
    source = textwrap.dedent(HEAD + text)
    assert bots_defined(ast.parse(source)) == (bots, uncertain)
    if uncertain:
        return  # what the loader finds depends on code that is not here
    path = tmp_path / "b.py"
    path.write_text(source, encoding="utf-8")
    if len(bots) == 1:
        check_bot_file(path)
        load_bot(str(path))  # the loader agrees: one bot
        return
    with pytest.raises(BotFileError, match="several bots" if bots else "no bot in") as refused:
        check_bot_file(path)
    with pytest.raises(BotSpecError) as loader:
        load_bot(str(path))
    assert str(refused.value).split(" (")[0].split(":")[0] == str(loader.value).split(" (")[0].split(":")[0]

"""What went wrong is shown: a bot's first failure, its crash output, its log file; broken bot files and bots
that never connect are clear failures; the documented `serve --token` workflow plays. Real commands, subprocesses."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_harness import WITH_CTRL_C

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "python" / "minimal_bot.py"

RAISING = textwrap.dedent(
    """\
    from skyjo_bot import Bot


    class Raiser(Bot):
        def decide(self, view):
            print("thinking hard", flush=True)
            raise ValueError("boom at decide")
    """
)

# A bot that plays, then dies the way a Go program panics: the message first, stack frames after it.
PANICKING = textwrap.dedent(
    """\
    import os
    import sys

    from skyjo_bot import Bot


    class Panics(Bot):
        def decide(self, view):
            sys.stderr.write("panic: runtime error: index out of range [5] with length 3\\n\\n")
            sys.stderr.write("goroutine 1 [running]:\\nmain.decide(...)\\n\\t/src/bot/main.go:42 +0x1d\\n")
            sys.stderr.flush()
            os._exit(2)
    """
)


def skyjo(*args: str, cwd: Path | None = None, timeout: float = 100) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120", "SKYJO_CONTROL_TOKEN": ""}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_a_raising_bot_shows_its_first_failure_and_keeps_its_output(tmp_path: Path) -> None:
    bot = tmp_path / "raise_bot.py"
    bot.write_text(RAISING, encoding="utf-8")
    logs = tmp_path / "logs"
    out = skyjo("match", str(bot), "greedy", "--games", "2", "--seed", "1", "--logs", str(logs))
    assert out.returncode == 0, out.stderr
    message = one_line(out.stderr)
    assert "raise_bot: first failure in game 1, round 1" in message
    assert f"ValueError: boom at decide (at {bot}:7 in decide)" in message
    log = logs / "raise_bot.log"
    assert f"all of its output: {log}" in message
    text = log.read_text(encoding="utf-8")
    assert "thinking hard" in text and "Traceback" in text and 'raise ValueError("boom at decide")' in text


def test_a_crashing_command_bot_shows_its_panic_message_not_only_a_stack_frame(tmp_path: Path) -> None:
    bot = tmp_path / "panics.py"
    bot.write_text(PANICKING, encoding="utf-8")
    command = f"cmd:{sys.executable} -m skyjo_bot run {bot}"
    out = skyjo("match", command, "greedy", "--games", "1", "--seed", "1", "--grace-ms", "300", "--logs", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "exited with code 2" in out.stderr
    assert "exited with code 2 after" in out.stderr and "s: panic: runtime error: index out of range" in out.stderr
    assert "/src/bot/main.go:42" in out.stderr  # the last lines follow
    (log,) = tmp_path.glob("python*.log")  # a command bot is named after its program
    assert "panic: runtime error" in log.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["match", "play"])
def test_a_bot_file_with_a_syntax_error_is_one_clean_line(tmp_path: Path, command: str) -> None:
    bot = tmp_path / "broken.py"
    bot.write_text("from skyjo_bot import Bot\nclass Broken(Bot)\n    pass\n", encoding="utf-8")
    out = skyjo(command, str(bot), "greedy")
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == f"error: {bot}:2: SyntaxError: expected ':'"


def test_a_class_the_file_does_not_define_is_refused_before_any_process_starts(tmp_path: Path) -> None:
    out = skyjo("match", f"{MINIMAL}:NoSuchClass", "greedy", "--logs", str(tmp_path / "logs"))
    assert out.returncode == 2, out.stderr
    assert "defines no 'NoSuchClass' (classes defined there: MinimalBot)" in one_line(out.stderr)
    assert not list((tmp_path / "logs").glob("*.log")) if (tmp_path / "logs").exists() else True


def test_a_remote_bot_that_never_connects_is_a_failure_naming_it() -> None:
    started = time.monotonic()
    out = skyjo("match", "remote:ghost", "greedy", "--games", "2", "--connect-timeout", "1")
    assert out.returncode == 3, out.stderr
    message = one_line(out.stderr)
    assert "remote bot 'ghost' did not connect to the referee within 1 s (--connect-timeout)" in message
    (waiting,) = [line for line in out.stderr.splitlines() if "waiting 1 s for remote bot 'ghost'" in line]
    assert re.search(r"SKYJO_ADDR=127\.0\.0\.1:\d+ SKYJO_TOKEN=\S+$", waiting)  # one line, never wrapped
    assert time.monotonic() - started < 60


@pytest.fixture
def referee() -> Iterator[tuple[str, subprocess.Popen[str], list[str]]]:
    """``serve --token mybot=... --token ghost=...`` on a free port: its address, process and printed lines."""
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": "", "COLUMNS": "80"}
    args = ["serve", "--address", "127.0.0.1:0", "--control-token", "ctl-token-0123456"]
    args += ["--token", "mybot=" + "s3cret" * 12, "--token", "ghost=ghost-token-0123456789"]
    server = subprocess.Popen([sys.executable, "-m", "skyjo_ref", *args], stderr=subprocess.PIPE, text=True, env=env)
    assert server.stderr is not None
    lines: list[str] = []
    while not any(line.startswith("stop with") for line in lines):
        line = server.stderr.readline()
        assert line, "".join(lines)
        lines.append(line)
    found = re.search(r"listening on (\S+)", "".join(lines))
    assert found is not None
    try:
        yield found.group(1), server, lines
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)


def test_the_documented_serve_workflow_plays_the_bot_started_with_its_token(
    referee: tuple[str, subprocess.Popen[str], list[str]],
) -> None:
    address, _, lines = referee
    # printed on one line even in a pipe 80 columns wide, so a script can take it as it is
    printed = [line for line in lines if "SKYJO_TOKEN=" + "s3cret" * 12 in line]
    assert printed and f"SKYJO_ADDR={address} SKYJO_TOKEN={'s3cret' * 12} python -m skyjo_bot run" in printed[0]
    env = {**os.environ, "SKYJO_ADDR": address, "SKYJO_TOKEN": "s3cret" * 12}
    bot = subprocess.Popen([sys.executable, "-m", "skyjo_bot", "run", str(MINIMAL)], env=env)
    try:
        out = skyjo(
            "match", "remote:mybot", "greedy", "--games", "2", "--referee", address,
            "--control-token", "ctl-token-0123456", "--json", "-", "--grace-ms", "60000",  # however slow its start
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        rows = {row["name"]: row for row in json.loads(out.stdout)["bots"]}
        assert rows["mybot"]["games"] == 2 and rows["mybot"]["forfeits"] == 0 and rows["mybot"]["strikes"] == 0
    finally:
        bot.send_signal(signal.SIGTERM)
        bot.wait(timeout=30)


def test_a_remote_bot_that_never_connects_to_a_running_referee_fails_naming_it(
    referee: tuple[str, subprocess.Popen[str], list[str]],
) -> None:
    address, _, _ = referee
    out = skyjo(
        "match", "remote:ghost", "greedy", "--games", "2", "--referee", address,
        "--control-token", "ctl-token-0123456", "--grace-ms", "300",
    )  # fmt: skip
    assert out.returncode == 3, out.stderr
    assert f"remote bot 'ghost' never connected to the referee at {address}" in one_line(out.stderr)


def test_ctrl_c_during_a_match_prints_the_summary_and_writes_the_json(tmp_path: Path) -> None:
    records = tmp_path / "records"
    summary = tmp_path / "summary.json"
    match = subprocess.Popen(
        [
            *WITH_CTRL_C,  # SIGINT at its default even when the suite runs in the background
            *("-m", "skyjo_ref", "match", str(MINIMAL), "greedy", "--games", "5000", "--seed", "7"),
            *("--records", str(records), "--json", str(summary)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKYJO_CONTROL_TOKEN": ""},
    )
    deadline = time.monotonic() + 90
    while len(list(records.glob("*.json"))) < 2 and time.monotonic() < deadline and match.poll() is None:
        time.sleep(0.05)
    match.send_signal(signal.SIGINT)
    out, err = match.communicate(timeout=60)
    assert match.returncode == 130, err
    assert "Traceback" not in err and "interrupted after" in err
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert data["games"] >= 2 and data["seed"] == "7"
    assert f"{data['games']} games, 2 players, seed 7" in out


def test_help_shows_flags_without_a_value() -> None:
    out = skyjo("tournament", "--help")
    assert out.returncode == 0
    (line,) = [line for line in out.stdout.splitlines() if "--new" in line]
    assert "<bool>" not in line and "<bool>" not in out.stdout


def test_piped_match_output_is_plain_tab_separated_lines() -> None:
    out = skyjo("match", "greedy", "random", "--games", "4", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert not set("│┃━─┏━") & set(out.stdout + out.stderr)  # no boxes, no progress bar
    lines = out.stdout.splitlines()
    assert lines[0] == "4 games, 2 players, seed 3"
    assert lines[1] == "bot\tgames\twins\twin rate (95% CI)\tavg total\tavg round\tstrikes\tforfeits"
    assert {line.split("\t")[0] for line in lines[2:4]} == {"greedy", "random"}


def test_a_module_class_that_does_not_exist_is_refused_before_any_process_starts() -> None:
    out = skyjo("match", "skyjo_ref.bots.greedy:NoSuchBot", "random")
    assert out.returncode == 2, out.stderr
    assert "greedy.py defines no 'NoSuchBot' (classes defined there: GreedyBot)" in one_line(out.stderr)


def test_the_sdk_runner_says_where_the_syntax_error_is(tmp_path: Path) -> None:
    bot = tmp_path / "broken.py"
    bot.write_text("from skyjo_bot import Bot\nclass Broken(Bot)\n    pass\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "skyjo_bot", "run", str(bot), "--addr", "127.0.0.1:1", "--token", "t"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: {bot}:2: SyntaxError: expected ':'"


ILLEGAL_SWAP = textwrap.dedent(
    """\
    from skyjo_bot import Action, Bot, DecisionKind


    class Swapper(Bot):
        def decide(self, view):
            if view.decision == DecisionKind.SWAP_OR_REVEAL:
                return Action.swap(99)
            return view.legal_actions[0]
    """
)


def test_an_illegal_action_the_sdk_refuses_is_blamed_on_the_bot_s_line_and_says_what_was_played(
    tmp_path: Path,
) -> None:
    bot = tmp_path / "swapper.py"
    bot.write_text(ILLEGAL_SWAP, encoding="utf-8")
    out = skyjo("match", str(bot), "greedy", "--games", "2", "--seed", "1", "--logs", str(tmp_path))
    assert out.returncode == 0, out.stderr
    message = one_line(out.stderr)
    assert f"got 99 (at {bot}:7 in decide)" in message, message
    assert "skyjo_bot/types.py" not in message
    played = re.search(
        r"swapper: first failure in game 1, round 1, swap_or_reveal: .*; the referee played (.+?) instead", message
    )
    assert played is not None and re.fullmatch(r"reveal \d+", played.group(1)), message


ESCAPING = textwrap.dedent(
    """\
    import os, sys
    from skyjo_bot import Bot


    class Escapes(Bot):
        def decide(self, view):
            if os.environ.get("ESCAPE_CRASH"):
                sys.stderr.write("ValueError: \\x1b]0;pwned\\x07\\x1b[2J\\x1b[1Acrashed\\r\\u202eevil\\n")
                sys.stderr.flush()
                os._exit(3)
            raise ValueError("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\x1b[0m\\x08\\rboom\\u202e")
    """
)


@pytest.mark.parametrize("crash", [False, True])
def test_a_bots_escape_sequences_never_reach_the_terminal(tmp_path: Path, crash: bool) -> None:
    """A bot's exception text (the first-failure note) and its crash output (the crash's line and tail) are shown
    without escape sequences or control characters: a bot cannot retitle, clear or rewrite the operator's
    terminal."""
    bot = tmp_path / "escapes.py"
    bot.write_text(ESCAPING, encoding="utf-8")
    spec = f"cmd:{sys.executable} -m skyjo_bot run {bot}" if crash else str(bot)
    env = {**os.environ, "COLUMNS": "200", "ESCAPE_CRASH": "1" if crash else ""}
    out = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "match", spec, "greedy", "--games", "1", "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=100,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    shown = out.stdout + out.stderr
    assert ("crashed" if crash else "boom") in shown, shown
    bad = sorted({hex(ord(ch)) for ch in shown if (ord(ch) < 32 and ch not in "\n\t") or 0x7F <= ord(ch) <= 0x9F})
    assert bad == [] and "\u202e" not in shown, bad

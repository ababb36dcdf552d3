"""``skyjo-ref match`` and ``skyjo-ref serve`` through the real command, in subprocesses."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from skyjo_ref.records import check_file

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "python" / "minimal_bot.py"


def skyjo(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120", "SKYJO_CONTROL_TOKEN": ""}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def numbers(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "process_faults"}


def test_random_vs_greedy_is_fast_deterministic_and_writes_json_and_records(tmp_path: Path) -> None:
    started = time.monotonic()
    out = skyjo(
        "match",
        "random",
        "greedy",
        "--games",
        "40",
        "--seed",
        "5",
        "--json",
        str(tmp_path / "a.json"),
        "--records",
        str(tmp_path / "games"),
    )
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 60
    summary = json.loads((tmp_path / "a.json").read_text())
    assert summary["games"] == 40 and summary["seed"] == "5" and summary["players_per_game"] == 2
    bots = {b["name"]: b for b in summary["bots"]}
    assert set(bots) == {"random", "greedy"}
    assert bots["greedy"]["win_rate"] > 0.8 and bots["greedy"]["avg_total"] < bots["random"]["avg_total"]
    assert abs(bots["greedy"]["wins"] + bots["random"]["wins"] - 40) < 1e-9
    lo, hi = bots["greedy"]["win_rate_ci"]
    assert lo <= bots["greedy"]["win_rate"] <= hi
    assert summary["verdict"]["better"] == "greedy" and summary["verdict"]["blocks"] == 20
    assert "greedy is better than random: Elo +" in out.stdout and ", LOS " in out.stdout
    assert summary["verdict"]["elo_diff_ci"][0] > 0 and summary["verdict"]["los"] > 0.975
    files = sorted((tmp_path / "games").glob("*.json"))
    assert len(files) == 40
    for path in files[:5]:
        check_file(path)
    again = skyjo("match", "random", "greedy", "--games", "40", "--seed", "5", "--json", "-")
    assert again.returncode == 0, again.stderr
    assert numbers(json.loads(again.stdout)) == numbers(summary)


def test_fewer_bots_than_seats_cycle_and_every_seat_is_filled() -> None:
    out = skyjo("match", "greedy", "random", "-n", "4", "--games", "8", "--seed", "2", "--json", "-")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["seats"] == ["greedy", "random", "greedy#2", "random#2"]
    assert [b["games"] for b in summary["bots"]] == [16, 16]


def test_a_python_bot_file_plays_as_an_sdk_subprocess() -> None:
    out = skyjo("match", str(MINIMAL), "greedy", "--games", "2", "--seed", "1", "--json", "-")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    mini = summary["bots"][0]
    assert mini["name"] == "minimal_bot" and mini["games"] == 2 and mini["strikes"] == 0 and mini["forfeits"] == 0


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The real command's entry point in this process (no interpreter start-up): exit code and stderr."""
    from skyjo_ref.cli.app import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["skyjo-ref", *args])
        patch.delenv("SKYJO_CONTROL_TOKEN", raising=False)
        with pytest.raises(SystemExit) as exited:
            main()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), " ".join(capsys.readouterr().err.split())  # unwrapped


def test_bad_input_is_a_one_line_message_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    cases = [
        (["match", "nothere.py", "greedy"], "no such file"),
        (["match", "grumpy", "greedy"], "unknown bot 'grumpy'"),
        (["match", "random", "greedy", "random", "-n", "2"], "cannot all sit"),
        (["match", "random", "greedy", "--rules", "nope"], "unknown rules preset"),
        (["match", "random", "greedy", "--option", "column_clear"], "expected key=value"),
        (["match", "random", "greedy", "--option", "end_score=-5"], "end_score"),
        (["match", "random", "greedy", "--referee", "127.0.0.1:1"], "control token"),
        (["serve", "--address", "nonsense"], "expected HOST:PORT"),
        (["serve", "--token", "nameonly"], "expected NAME=TOKEN"),
        (["serve", "--token", "dave=dave-7f3a9c1e"], "--token dave: a token of 13 characters is too short"),
        (["serve", "--control-token", "change-me"], "SKYJO_CONTROL_TOKEN): a token of 9 characters is too short"),
        (["serve", "--config", str(tmp_path / "missing.yaml")], "cannot read"),
    ]
    for args, message in cases:
        code, err = run_main(args, capsys)
        assert code == 2, (args, err)
        assert message in err, (args, err)
        assert "Traceback" not in err
    out = skyjo("match", "grumpy", "greedy")  # and once through a real process
    assert out.returncode == 2 and "unknown bot 'grumpy'" in out.stderr and "Traceback" not in out.stderr
    # a file without a bot is refused before anything runs (issue 30)
    code, err = run_main(["match", str(empty), "greedy", "--games", "1"], capsys)
    assert code == 2 and "no bot in" in err and "Traceback" not in err, err
    # a bot that passes the checks but cannot run exits 3, as in a tournament or a gate (skyjo_ref.errors)
    needs = tmp_path / "needs.py"
    needs.write_text("import no_such_module_here\nfrom skyjo_bot import Bot\n\n\nclass Needs(Bot):\n    pass\n")
    code, err = run_main(["match", str(needs), "greedy", "--games", "1"], capsys)
    assert code == 3 and "exited before connecting" in err and "needs.log" in err, err


def test_bot_files_that_are_not_one_python_bot_are_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: an unquoted ``cmd:node bot.js``, a .js file, a folder, a file with no bot or two: one line naming
    what it is and what to write instead, exit 2, before any process starts."""
    monkeypatch.chdir(ROOT)
    two = tmp_path / "two.py"
    two.write_text(
        "from skyjo_bot import Bot, bot\n\n\nclass A(Bot):\n    pass\n\n\n@bot\ndef b(view):\n"
        "    return view.legal_actions[0]\n"
    )
    (tmp_path / "none.py").write_text("def decide(view):\n    return view.legal_actions[0]\n")
    (tmp_path / "afolder").mkdir()
    quoted = "'cmd:node examples/node/bot.js'"
    cases = [
        (["cmd:node", "examples/node/bot.js", "greedy"], "examples/node/bot.js is not a Python bot (a .js file)"),
        (["examples/node/bot.js", "greedy"], f"quoted as one argument: {quoted}"),
        ([str(tmp_path / "afolder"), "greedy"], "afolder is a folder, not a Python bot file"),
        ([str(tmp_path / "afolder") + "/", "greedy"], "afolder/ is a folder, not a Python bot file"),
        ([str(tmp_path / "none.py"), "greedy"], "no bot in"),
        ([str(two), "greedy"], f"several bots in {two} (A, b): choose one with {two}:A"),
        (["cmd:python3", "nothere.py", "greedy"], "with spaces is one argument, quoted: 'cmd:python3 nothere.py'"),
    ]  # fmt: skip
    for args, message in cases:
        code, err = run_main(["match", *args, "--games", "2"], capsys)
        assert code == 2, (args, err)
        assert message in err and "SyntaxError" not in err and "Traceback" not in err, (args, err)
    code, err = run_main(["match", "cmd:node", "examples/node/bot.js", "greedy"], capsys)
    assert err.count(quoted) == 1, err  # the hint once, not twice
    code, err = run_main(["check-bot", "examples/node/bot.js"], capsys)
    assert code == 2 and quoted in err, err


def test_serve_config_mistakes_are_one_line_with_the_place_and_exit_2(tmp_path: Path) -> None:
    """The config file is checked like the flags (same limits) and its errors read FILE:LINE: key: expected."""
    config = tmp_path / "referee.yaml"
    cases = [
        ("address: 127.0.0.1:0\nmax_message_bytes: -1\n", ":2: max_message_bytes: expected an integer from 1024"),
        ("time_control:\n  bank_ms: 5\n  decision_ms: -1\n", ":3: time_control.decision_ms: expected an integer"),
        ("time_control: {decison_ms: 5}\n", "time_control.decison_ms: unknown key 'decison_ms' (did you mean"),
        ("adress: 127.0.0.1:0\n", ":1: adress: unknown key 'adress' (did you mean 'address'?)"),
        ("time_control: {decision_ms: 5\ntokens: [\n", ": not valid YAML: "),
    ]
    for text, message in cases:
        config.write_text(text)
        out = skyjo("serve", "--config", str(config), timeout=60)
        assert out.returncode == 2, (text, out.stderr)
        assert out.stderr.startswith(f"error: {config}") and message in out.stderr, (text, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr, (text, out.stderr)
    for flags, message in (
        (["--decision-ms", "-1"], "--decision-ms: expected an integer from 0 to"),
        (["--max-message-bytes", "100"], "--max-message-bytes: expected an integer from 1024"),
    ):
        out = skyjo("serve", *flags, timeout=60)
        assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_serve_runs_until_sigterm_and_match_plays_on_it() -> None:
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": ""}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skyjo_ref",
            "serve",
            "--address",
            "127.0.0.1:0",
            "--control-token",
            "ctl-token-0123456",
            "--token",
            "tomas=tomas-token-01234",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stderr is not None
        lines = []
        address = None
        deadline = time.monotonic() + 60
        # read up to the last line of the banner: communicate() below reads the pipe itself, not this buffer
        while not (lines and lines[-1].startswith("stop with")) and time.monotonic() < deadline:
            line = server.stderr.readline()
            if not line:
                break
            lines.append(line)
            found = re.search(r"listening on (\S+)", line)
            address = found.group(1) if found else address
        assert address is not None, "".join(lines)
        out = skyjo(
            "match",
            "greedy",
            "random",
            "--games",
            "4",
            "--referee",
            address,
            "--control-token",
            "ctl-token-0123456",
            "--json",
            "-",
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["games"] == 4
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)  # its output is a few lines: the pipe cannot fill
        # read() through the same buffered reader: communicate() reads the pipe itself and would
        # lose the lines readline() has already buffered (all of them, when the referee was quick)
        rest = server.stderr.read()
    assert server.returncode == 0
    printed = "".join(lines) + rest
    # a given control token is not echoed
    assert "SKYJO_TOKEN=tomas-token-01234" in printed and "ctl-token" not in printed


def test_sigterm_stops_the_match_and_its_bot_processes(tmp_path: Path) -> None:
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": ""}
    records = tmp_path / "records"
    match = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skyjo_ref",
            "match",
            str(MINIMAL),
            "greedy",
            "--games",
            "5000",
            "--records",
            str(records),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    children: list[int] = []
    deadline = time.monotonic() + 90  # failure detectors only: each wait ends on what it waits for
    while not children and time.monotonic() < deadline and match.poll() is None:
        found = subprocess.run(["pgrep", "-P", str(match.pid)], capture_output=True, text=True)
        children = [int(p) for p in found.stdout.split()]
        if not children:
            time.sleep(0.05)
    assert children, "the bot process never started"
    while not any(records.glob("*.json")) and time.monotonic() < deadline and match.poll() is None:
        time.sleep(0.05)  # until the first game is written: the match is under way
    assert any(records.glob("*.json")), "no game finished"
    match.send_signal(signal.SIGTERM)
    _, err = match.communicate(timeout=60)
    assert match.returncode == 130 and "interrupted after" in err, err
    for pid in children:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"bot process {pid} outlived the match")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_serve_refuses_a_port_that_is_taken(host: str) -> None:
    """gRPC alone would bind [::1] for localhost and say nothing; the referee says the port is in use."""
    import socket

    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = skyjo("serve", "--address", f"{host}:{port}", timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"port {port} of 127.0.0.1 is in use" in result.stderr
    assert "Traceback" not in result.stderr and "GRPC_VERBOSITY" not in result.stderr


def test_serve_refuses_a_port_out_of_range() -> None:
    result = skyjo("serve", "--address", "127.0.0.1:99999", timeout=60)
    assert result.returncode == 2
    assert "the port must be 0-65535" in result.stderr


def test_connect_timeout_is_honoured_for_a_command_bot_and_names_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--connect-timeout bounds every bot's wait (not only remote: bots'), and the message says where its output is."""
    logs = tmp_path / "logs"
    code, err = run_main(
        ["match", "cmd:sleep 600", "greedy", "--games", "1", "--connect-timeout", "1", "--logs", str(logs)], capsys
    )
    assert code == 3, err
    assert "bot 'sleep' did not connect to the referee within 1 s (--connect-timeout)" in err, err
    assert str(logs / "sleep.log") in err, err
    assert "Traceback" not in err

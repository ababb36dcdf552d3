"""``skyjo-ref replay`` through the real console script (subprocesses), plus the position cursor it uses."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sdk_harness import WITH_CTRL_C
from skyjo_bot.types import SlotState
from skyjo_ref import records
from skyjo_ref.cli.replay_view import ReplayCursor

DATA = Path(__file__).parent / "data"
VALID = DATA / "greedy_random.json"
ILLEGAL = DATA / "greedy_random_illegal_action.json"


def cli() -> list[str]:
    script = Path(sys.executable).parent / "skyjo-ref"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from skyjo_ref.cli.app import main; main()"]


def run(*args: str | Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("SKYJO_DEBUG", None)
    done = subprocess.run(
        [*cli(), "replay", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert "Traceback" not in done.stderr + done.stdout
    return done


@pytest.fixture()
def tampered(tmp_path: Path) -> Path:
    record: dict[str, Any] = records.load(VALID)
    bad = copy.deepcopy(record)
    bad["rounds"][1]["result"]["scores"] = bad["rounds"][1]["result"]["scores"][::-1]
    path = tmp_path / "scores.json"
    records.save(bad, path)
    return path


# ------------------------------------------------------------------- --check


def test_check_valid_file_exits_0() -> None:
    done = run("--check", VALID)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{VALID}: ok (2 rounds, 2 players, won by greedy)"


def test_check_tampered_file_exits_1_with_the_location(tampered: Path) -> None:
    done = run("--check", VALID, ILLEGAL, tampered)
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert lines[0].endswith(": ok (2 rounds, 2 players, won by greedy)")
    assert lines[1].startswith(f"{ILLEGAL}: invalid: round 0, action 9: seat 1 cannot take now")
    assert lines[2].startswith(f"{tampered}: invalid: round 1: stored scores ")
    assert len(lines) == 3
    assert "count from 0, as in the record" in done.stderr


def test_check_missing_file_and_malformed_json_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "skyjo-game/1", "players": [', encoding="utf-8")
    missing = tmp_path / "missing.json"
    done = run("--check", missing)
    assert done.returncode == 2
    assert done.stdout.strip() == f"{missing}: cannot read: No such file or directory"
    done = run("--check", broken)
    assert done.returncode == 2
    assert done.stdout.strip().startswith(f"{broken}: not valid JSON (line 1, column 40)")
    done = run("--check", VALID, ILLEGAL, broken, tmp_path)  # every file gets its line; the worst code wins
    assert done.returncode == 2
    assert len(done.stdout.strip().splitlines()) == 4
    assert f"{tmp_path}: cannot read:" in done.stdout


def test_check_refuses_display_options() -> None:
    done = run("--check", VALID, "--round", "1")
    assert done.returncode == 2 and "--check replays whole files" in done.stderr


# -------------------------------------------------------------------- showing


def test_default_output_is_a_summary_of_rounds_and_the_final_table() -> None:
    done = run(VALID)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "2 players: 0 greedy, 1 random" in out
    assert "rounds (* finisher penalised, not strictly lowest)" in out and "final" in out
    record = records.load(VALID)
    lines = out.splitlines()
    assert "round\tactions\tfinisher\tgreedy score (total)\trandom score (total)" in lines  # a pipe: tab-separated
    assert not set("│┃━─┏") & set(out)  # and no boxes
    for k, entry in enumerate(record["rounds"]):  # rounds counted from 1 for people
        assert any(line.startswith(f"{k + 1}\t{len(entry['actions'])}\t") for line in lines)
    for total in record["result"]["totals"]:
        assert str(total) in out
    assert "greedy (winner)" in out


def test_round_shows_its_final_position_every_action_and_result() -> None:
    done = run(VALID, "--round", "2")  # the second round: record round 1
    assert done.returncode == 0, done.stderr
    record = records.load(VALID)
    actions = record["rounds"][1]["actions"]
    assert done.stdout.startswith("Round 2 of 2")
    assert f"after action {len(actions)} of {len(actions)}" in done.stdout
    assert "round over" in done.stdout
    for i in range(len(actions)):
        assert f"  {i + 1:>3}  seat " in done.stdout
    result = record["rounds"][1]["result"]
    assert f"Round 2 result (finisher: seat {result['finisher']})" in done.stdout
    assert "?" not in done.stdout.split("Round 2 result")[0].split("\n", 3)[3]  # the end: every card shown


def test_action_shows_the_position_after_that_action() -> None:
    done = run(VALID, "--round", "1", "--action", "4")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "after action 4 of " in out
    assert "next: seat 0 greedy - draw_or_take" in out or "next: seat 1 random - draw_or_take" in out
    assert "    5  " not in out  # nothing after action 4
    assert "starts the turns" in out
    assert out.count("?") == 2 * 12 - 4  # two opening reveals each


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--action", "3"), "--action I needs --round K"),
        (("--round", "3"), "--round 3: this game has rounds 1 to 2"),
        (("--round", "0"), "--round 0: this game has rounds 1 to 2"),
        (("--round", "1", "--action", "999"), "--action 999: round 1 has actions 1 to "),
    ],
)
def test_bad_positions_are_usage_errors(args: tuple[str, ...], message: str) -> None:
    done = run(VALID, *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_showing_an_invalid_or_missing_record_exits_2_only_check_exits_1(tmp_path: Path) -> None:
    done = run(ILLEGAL)
    assert done.returncode == 2  # bad input: exit 1 is only replay --check's "this record is invalid"
    assert "invalid record: round 0, action 9: seat 1 cannot take now" in done.stderr
    assert run("--check", ILLEGAL).returncode == 1
    not_a_record = tmp_path / "other.json"
    not_a_record.write_text('{"a": 1}', encoding="utf-8")
    done = run(not_a_record)
    assert done.returncode == 2 and "invalid record" in done.stderr
    done = run(tmp_path / "nope.json")
    assert done.returncode == 2
    assert "nope.json: cannot read: No such file or directory" in done.stderr
    done = run(VALID, VALID)
    assert done.returncode == 2 and "one record at a time" in done.stderr


def test_interactive_stepping_from_stdin() -> None:
    keys = ["", "", "", "p", "n", "1", "", "x", "9", "q"]
    done = run(VALID, "--interactive", stdin="\n".join(keys) + "\n")
    assert done.returncode == 0, done.stderr
    headers = [line for line in done.stdout.splitlines() if line.startswith("Round ")]
    assert [h.split("  ·  ")[1] for h in headers] == [
        "before the first action",
        "after action 1 of 54",
        "after action 2 of 54",
        "after action 3 of 54",
        "after action 2 of 54",  # p
        "before the first action",  # n: the second round
        "before the first action",  # 1: the first round
        "after action 1 of 54",
        "after action 1 of 54",  # x: unknown key, same position
        "after action 1 of 54",  # 9: no such round
    ]
    assert headers[5].startswith("Round 2 of 2")
    assert "unknown key 'x'" in done.stdout and "no round 9: rounds 1 to 2" in done.stdout


def test_interactive_ends_at_end_of_input() -> None:
    done = run(VALID, "--interactive", stdin="\n")
    assert done.returncode == 0
    assert done.stdout.count("Round 1 of 2") == 2


# ------------------------------------------------------------------ the cursor


def test_cursor_positions_follow_the_record() -> None:
    record = records.load(VALID)
    cursor = ReplayCursor(record)
    deck = record["rounds"][0]["deck"]
    start = cursor.position(0, 0)
    assert start.discard_top == deck[24] and start.seat == 0 and not start.round_over
    assert all(s is SlotState.HIDDEN for g in start.grids for s in g.states)
    opened = cursor.position(0, 4)
    for entry in record["rounds"][0]["actions"][:4]:
        seat, pos = entry["seat"], entry["pos"]
        assert opened.grids[seat].values[pos] == deck[12 * seat + pos]
    end = cursor.position(1, cursor.actions_in(1))
    assert end.round_over and end.result is not None
    assert end.result.scores == record["rounds"][1]["result"]["scores"]
    assert all(s is not SlotState.HIDDEN for g in end.grids for s in g.states)
    assert [sum(v for v in g.values if v is not None) for g in end.grids] == record["rounds"][1]["result"]["raw"]
    assert len(end.log) == cursor.actions_in(1)
    with pytest.raises(IndexError):
        cursor.position(2, 0)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_terminal_gets_the_interactive_mode() -> None:
    """No flag: stdin and stdout are a (pseudo-)terminal, so the replay steps with keys."""
    import select

    master, slave = os.openpty()
    env = {**os.environ, "COLUMNS": "160", "LINES": "60", "TERM": "xterm"}
    proc = subprocess.Popen([*cli(), "replay", str(VALID)], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    os.write(master, b"\nq\n")
    out = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = out.decode("utf-8", "replace")
    assert "Enter next action" in text
    assert "after action 1 of 54" in text
    assert "Traceback" not in text


def test_ctrl_c_while_stepping_exits_130() -> None:
    proc = subprocess.Popen(
        [*WITH_CTRL_C, "-m", "skyjo_ref", "replay", str(VALID), "--interactive"],  # SIGINT not inherited ignored
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert proc.stdout is not None
    seen = b""
    while b"Enter next action" not in seen:  # it waits for a key now
        chunk = proc.stdout.read1(4096)
        assert chunk, seen.decode()
        seen += chunk
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err

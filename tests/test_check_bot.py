"""``skyjo-ref check-bot``: correct bots pass every case; each protocol fault is named by its case.

Real parts only: the CLI in a subprocess, the scripted referee on loopback and a Unix socket, real bot processes
(the SDK, the Node example on raw stubs, and tests/data/broken_bot.py: raw Python stubs with one fault each).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from skyjo_ref.checkbot import CASES, quick_cases

ROOT = Path(__file__).resolve().parent.parent
MINIMAL_BOT = ROOT / "examples" / "python" / "minimal_bot.py"
STRONG_BOT = ROOT / "examples" / "python" / "strong_bot.py"
BROKEN_BOT = ROOT / "tests" / "data" / "broken_bot.py"
NODE_DIR = ROOT / "examples" / "node"


def check_bot(*args: str, cwd: Path = ROOT, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "check-bot", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def results(path: Path) -> dict[str, dict[str, Any]]:
    return {c["case"]: c for c in json.loads(path.read_text(encoding="utf-8"))["cases"]}


def broken(fault: str) -> str:
    return f"cmd:{sys.executable} {BROKEN_BOT} {fault}"


def test_list_names_every_case_one_a_line() -> None:
    done = check_bot("--list")
    assert done.returncode == 0, done.stderr
    names = done.stdout.splitlines()
    assert names == list(CASES)
    assert {"hello-first", "reconnect-same-token", "sigterm-backing-off", "parent-death", "tls"} <= set(names)
    assert set(quick_cases()) < set(names)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["greedy"], "built-in bot"),
        (["remote:mine"], "starts the bot itself"),
        ([str(MINIMAL_BOT), "--case", "no-such-case"], "--case 'no-such-case': no such case"),
        ([], "missing BOT"),
        (["nothing-here.py"], "no such file"),
        ([str(ROOT / "examples" / "ci" / "league.yaml")], "name its bot with --bot NAME"),
        ([str(ROOT / "examples" / "ci" / "league.yaml"), "--bot", "nobody"], "--bot 'nobody': no such bot"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    done = check_bot(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_an_expected_failures_file_with_an_unknown_case_is_refused(tmp_path: Path) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("# known\nhello-first\nno-such-case\n", encoding="utf-8")
    done = check_bot(str(MINIMAL_BOT), "--expect-fail", str(listed))
    assert done.returncode == 2
    assert "unknown case 'no-such-case'" in done.stderr


@pytest.mark.timeout(300)
def test_the_minimal_sdk_bot_passes_every_case_with_json_and_junit_reports(tmp_path: Path) -> None:
    started = time.monotonic()
    done = check_bot(str(MINIMAL_BOT), "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml"),
                     "--logs", str(tmp_path / "logs"))  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    found = results(tmp_path / "r.json")
    assert list(found) == list(CASES)
    not_passed = {name: c["did"] for name, c in found.items() if c["status"] != "pass"}
    assert not_passed == {}
    assert f"{len(CASES)} of {len(CASES)} cases passed" in done.stdout
    suite = ET.parse(tmp_path / "r.xml").getroot()
    assert suite.get("tests") == str(len(CASES)) and suite.get("failures") == "0"
    assert all(Path(c["log"].split(", ")[0]).is_file() for c in found.values())
    print(f"check-bot minimal_bot.py: {took:.1f} s wall")  # docs/check-bot.md quotes it (about 35 s on 2 cores)


@pytest.mark.timeout(300)
def test_the_node_example_on_raw_stubs_passes_every_case(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "node is not installed: install Node.js 18+ to run the Node example bot's tests"
    assert (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(), "run `npm ci` in examples/node"
    done = check_bot(f"cmd:{node} {NODE_DIR / 'bot.js'}", "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert {c["status"] for c in results(tmp_path / "r.json").values()} == {"pass"}


@pytest.mark.timeout(180)
def test_an_sdk_bot_with_event_hooks_passes_the_quick_cases_and_a_reconnect(tmp_path: Path) -> None:
    """strong_bot.py reads every event (the SDK converts them for it) and keeps memory across a reconnect."""
    done = check_bot(str(STRONG_BOT), "--quick", "--case", "reconnect-same-token", "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    found = results(tmp_path / "r.json")
    assert set(found) == {*quick_cases(), "reconnect-same-token"}
    assert {c["status"] for c in found.values()} == {"pass"}


#: fault of tests/data/broken_bot.py -> the case that names it, and words of what the bot did
FAULTS = {
    "wrong-request-id": ("request-id-echoed", "replied with request_id"),
    "no-hello": ("hello-first", "sent reply first"),
    "index-outside": ("decision-draw-or-take", "answered index 2, outside the legal actions"),
    "illegal-action": ("decision-swap-after-take", "played draw, which is not legal here"),
    "sigterm-ignored": ("sigterm-waiting", "was still running 3 s later"),
    "no-reconnect": ("reconnect-same-token", "exited with code 0"),
    "one-game": ("game-after-game", "closed its stream"),  # while waiting for a reply, or while sending
    "too-late": ("answer-in-time", "had not answered after 2000 ms"),
    "no-backoff": ("backoff", "reconnected after pauses of"),
    "flood": ("decision-draw-or-take", "replied with request_id 0"),  # and the scripted referee stays bounded
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_protocol_fault_is_named_by_its_case(fault: str, tmp_path: Path) -> None:
    case, words = FAULTS[fault]
    done = check_bot(broken(fault), "--case", case, "--json", str(tmp_path / "r.json"))
    assert done.returncode == 1, done.stdout + done.stderr
    result = results(tmp_path / "r.json")[case]
    assert result["status"] == "fail" and result["verdict"] == "FAIL"
    assert words in result["did"], result
    assert case in done.stdout and "FAIL" in done.stdout


@pytest.mark.timeout(180)
def test_the_same_raw_bot_without_its_fault_passes_those_cases(tmp_path: Path) -> None:
    """The cases above fail for the fault, not for the raw stubs: the faultless bot passes each of them."""
    cases = [arg for case, _ in FAULTS.values() for arg in ("--case", case)]
    done = check_bot(broken("none"), *cases, "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert {c["status"] for c in results(tmp_path / "r.json").values()} == {"pass"}


@pytest.mark.timeout(120)
def test_expected_failures_keep_the_run_green_and_never_go_stale(tmp_path: Path) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("hello-first  # this bot speaks first\n", encoding="utf-8")
    done = check_bot(broken("no-hello"), "--case", "hello-first", "--expect-fail", str(listed))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "expected fail" in done.stdout
    stale = check_bot(broken("none"), "--case", "hello-first", "--expect-fail", str(listed),
                      "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert results(tmp_path / "r.json")["hello-first"]["verdict"] == "PASS (listed as failing)"


@pytest.mark.timeout(120)
def test_a_bot_that_never_connects_fails_fast_naming_its_output(tmp_path: Path) -> None:
    bot = tmp_path / "silent.py"
    bot.write_text("import sys\nprint('no referee for me', file=sys.stderr)\nsys.exit(4)\n", encoding="utf-8")
    started = time.monotonic()
    done = check_bot(f"cmd:{sys.executable} {bot}", "--quick", "--json", str(tmp_path / "r.json"))
    assert done.returncode == 1
    assert time.monotonic() - started < 60  # not 30 s a case
    found = results(tmp_path / "r.json")
    assert "exited with code 4" in found["hello-first"]["did"] and "no referee for me" in found["hello-first"]["did"]
    assert found["decision-draw-or-take"]["did"].startswith("not run: the bot never connected")


def test_check_bot_imports_nothing_above_it() -> None:
    """It sits beside the tournament and the gate (they call it), above execution: never the reverse."""
    import skyjo_ref.checkbot
    from test_execution_imports import imported_modules

    folder = Path(skyjo_ref.checkbot.__file__).parent
    wrong = [
        f"{path.name}:{line}: {name}"
        for path in sorted(folder.glob("*.py"))
        for line, name in imported_modules(path, "skyjo_ref.checkbot")
        if name.startswith(("skyjo_ref.tournament", "skyjo_ref.gate", "skyjo_ref.cli", "skyjo_ref.report"))
    ]
    assert wrong == []

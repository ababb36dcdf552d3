"""``skyjo-ref new-bot``: a ready project that passes check-bot and plays its league with 0 strikes; and a league's
``check: quick`` / ``gate --check`` stopping a broken bot before its first game, naming the case."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from skyjo_ref.newbot import LEAGUE_DEALS, LEAGUE_SEED, class_name, languages, league_yaml
from skyjo_ref.tournament.config import load_config

ROOT = Path(__file__).resolve().parent.parent
MINIMAL_BOT = ROOT / "examples" / "python" / "minimal_bot.py"
BROKEN_BOT = ROOT / "tests" / "data" / "broken_bot.py"


def cli(*args: str, cwd: Path = ROOT, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _decide(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "decide"]
    assert len(found) == 1
    return ast.dump(found[0], include_attributes=False)


@pytest.mark.timeout(300)
def test_a_new_python_bot_builds_passes_check_bot_and_plays_its_league_with_no_strikes(tmp_path: Path) -> None:
    project = tmp_path / "my-bot"
    made = cli("new-bot", str(project), "--lang", "python")
    assert made.returncode == 0, made.stderr
    assert f"skyjo-ref check-bot {project}/league.yaml --bot my-bot" in made.stdout
    assert {p.name for p in project.iterdir()} >= {"bot.py", "build", "README.md", "league.yaml", "requirements.txt"}
    assert _decide(project / "bot.py") == _decide(MINIMAL_BOT)  # the reference strategy, exactly
    assert "__BOT_" not in (project / "bot.py").read_text() + (project / "README.md").read_text()
    built = subprocess.run([str(project / "build")], capture_output=True, text=True, timeout=60, check=False)
    assert built.returncode == 0, built.stderr

    checked = cli("check-bot", str(project / "league.yaml"), "--bot", "my-bot", "--json", str(tmp_path / "c.json"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    statuses = {c["case"]: c["status"] for c in json.loads((tmp_path / "c.json").read_text())["cases"]}
    assert "fail" not in statuses.values()

    played = cli("tournament", str(project / "league.yaml"), "--json", str(tmp_path / "t.json"), cwd=tmp_path)
    assert played.returncode == 0, played.stdout + played.stderr
    assert "passed check-bot's" in played.stderr  # check: quick ran before the first game
    rows = {row["name"]: row for row in json.loads((tmp_path / "t.json").read_text())["bots"]}
    assert set(rows) == {"my-bot", "greedy", "random"}
    assert rows["my-bot"]["strikes"] == 0 and rows["my-bot"]["forfeits"] == 0
    config = load_config(project / "league.yaml")
    mine = config.bot("my-bot")
    assert mine.sandbox.isolation == config.sandbox.isolation  # the default isolation, nothing weakened


def test_the_league_file_is_the_same_for_every_language_but_the_bot_entry() -> None:
    known = languages()
    assert "python" in known
    python = league_yaml("x", known["python"])
    compiled = league_yaml("x", type(known["python"])("go", ROOT, "./x-bot", None, (), True))
    assert python.replace("    python: bot.py\n", "") == compiled.replace('    command: "./x-bot"\n    cwd: .\n', "")
    assert python != compiled
    assert f"seed: {LEAGUE_SEED}" in python and f"deals: {LEAGUE_DEALS}" in python


def test_a_language_plugs_in_with_its_sdk_folder_and_the_project_is_self_contained(tmp_path: Path) -> None:
    sdk = tmp_path / "sdk" / "toy"
    (sdk / "template" / "src").mkdir(parents=True)
    (sdk / "template" / "src" / "__BOT_NAME__.txt").write_text("I am __BOT_NAME__ (__BOT_CLASS__)\n")
    (sdk / "template" / "build").write_text("#!/bin/sh\ntrue\n")
    (sdk / "template" / "build").chmod(0o755)
    (sdk / "lib.toy").write_text("library\n")
    for junk in ("node_modules", "target"):
        (sdk / junk).mkdir()
        (sdk / junk / "big").write_text("x")
    (sdk / "secret.key").write_text("no")
    (sdk / "template.json").write_text(json.dumps({"command": "./build/bot", "exclude": ["*.key"]}))
    from skyjo_ref.newbot import new_bot

    name, language = new_bot(tmp_path / "out" / "toy-bot", "toy", root=tmp_path / "sdk")
    out = tmp_path / "out" / "toy-bot"
    assert (name, language.name) == ("toy-bot", "toy")
    assert (out / "src" / "toy-bot.txt").read_text() == "I am toy-bot (ToyBot)\n"
    assert (out / "build").stat().st_mode & 0o111
    assert sorted(p.name for p in (out / "skyjo-sdk").iterdir()) == ["lib.toy"]
    assert 'command: "./build/bot"' in (out / "league.yaml").read_text()
    assert class_name("9lives") == "Bot9lives" and class_name("my-bot.v2") == "MyBotV2"


#: Every language new-bot knows: each folder of sdk/ with a template.json.
LANGUAGES = [p.parent.name for p in (Path(__file__).resolve().parent.parent / "sdk").glob("*/template.json")]


@pytest.mark.parametrize(
    ("target", "lang", "says"),
    [
        ("taken", "python", "exists and is not empty"),
        ("fresh", "cobol", "--lang 'cobol': unknown language: expected one of " + ", ".join(sorted(LANGUAGES))),
        ("bad name!", "python", "is not a valid bot name"),
    ],
)
def test_new_bot_refuses_in_one_line(tmp_path: Path, target: str, lang: str, says: str) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("mine")
    done = cli("new-bot", str(tmp_path / target), "--lang", lang)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert (tmp_path / "taken" / "x").read_text() == "mine"
    assert not (tmp_path / "fresh").exists()


def _league(folder: Path, check: str) -> Path:
    folder.mkdir()
    shutil.copy(BROKEN_BOT, folder / "broken_bot.py")
    config = folder / "league.yaml"
    config.write_text(
        f"name: pushed\ndeals: 2\nseed: 1\ncheck: {check}\nisolation: none\n"
        f"bots:\n  - {{name: pushed, command: [{sys.executable}, broken_bot.py, index-outside]}}\n"
        "  - {name: greedy, builtin: greedy}\n",
        encoding="utf-8",
    )
    return config


@pytest.mark.timeout(120)
def test_check_quick_stops_a_league_before_its_first_game_naming_the_case(tmp_path: Path) -> None:
    config = _league(tmp_path / "league", "quick")
    done = cli("tournament", str(config), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "bot 'pushed' failed check-bot case decision-opening-reveal" in done.stderr
    assert "outside the legal actions" in done.stderr
    assert f"skyjo-ref check-bot {config} --bot pushed" in done.stderr
    assert "games played" not in done.stderr


def test_a_config_check_key_is_checked(tmp_path: Path) -> None:
    config = _league(tmp_path / "league", "thorough")
    done = cli("tournament", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert "check: 'thorough': expected one of none, quick" in done.stderr


@pytest.mark.timeout(120)
def test_gate_check_fails_a_broken_candidate_in_seconds(tmp_path: Path) -> None:
    done = cli(
        "gate", f"cmd:{sys.executable} {BROKEN_BOT} no-hello", "greedy", "--check", "--out", str(tmp_path / "g"),
        "--isolation", "none",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "failed check-bot case hello-first" in done.stderr and "sent reply first" in done.stderr


def test_the_python_template_plays_the_reference_moves_on_every_conformance_vector(tmp_path: Path) -> None:
    """The project new-bot writes makes the moves conformance/ records, decision by decision (views and matches)."""
    import base64

    from skyjo_bot import convert
    from skyjo_bot.loader import load_bot
    from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

    def message(text: str) -> pb.PlayResponse:
        return pb.PlayResponse.FromString(base64.b64decode(text))

    def answer(start: str, request: str) -> str:
        game = convert.game_start_from_proto(message(start).game_start)
        return str(bot.decide(convert.decision_request_from_proto(message(request).decision, game)))

    from skyjo_ref.newbot import new_bot

    new_bot(tmp_path / "vectors-bot", "python")
    bot = load_bot(str(tmp_path / "vectors-bot" / "bot.py"))
    vectors = ROOT / "conformance"
    views = json.loads((vectors / "views.json").read_text())["vectors"]
    matches = [json.loads(p.read_text()) for p in sorted((vectors / "matches").glob("*.json"))]
    assert views and matches
    for vector in views:
        assert answer(vector["game_start"], vector["request"]) == vector["reference"], vector["name"]
    for match in matches:
        for index, decision in enumerate(match["decisions"]):
            assert answer(match["game_start"], decision["request"]) == decision["reference"], (match["name"], index)


def test_the_typescript_sdk_plugs_in_through_its_folder(tmp_path: Path) -> None:
    """sdk/typescript/ (the SDK issue's) is a language with no change here: its template and its SDK, minus its
    exclusions and build outputs, and the league's entry from its template.json (built and played in
    tests/test_sdk_typescript.py; check-bot passes it: docs/check-bot.md)."""
    from skyjo_ref.newbot import new_bot

    name, language = new_bot(tmp_path / "ts-bot", "typescript")
    out = tmp_path / "ts-bot"
    spec = json.loads((language.folder / "template.json").read_text())
    assert (name, language.name) == ("ts-bot", "typescript")
    assert (out / "build").stat().st_mode & 0o111 and (out / "src" / "bot.ts").is_file()
    copied = {p.name for p in (out / "skyjo-sdk").iterdir()}
    assert {"package.json", "src"} <= copied
    assert not copied & {"node_modules", "dist", "codegen", "template", "template.json"}
    assert f"command: {json.dumps(spec['command'])}\n    cwd: ." in (out / "league.yaml").read_text()
    assert "__BOT_NAME__" not in "".join(p.read_text() for p in out.rglob("*") if p.is_file() and p.suffix != ".json")

"""The CI example cannot rot: every ``run:`` step of examples/ci/workflows/*.yml runs here, in order.

The workflows are parsed as YAML and their jobs run as GitHub Actions would run them, on this machine:

- Jobs run in ``needs`` order; a matrix is expanded and each of its jobs (a league's shards) runs on
  its own fresh workspace, its steps as separate ``bash --noprofile --norc -eo pipefail`` processes
  (GitHub's ``shell: bash``) in the workspace, with the workflow's, job's and step's ``env``.
- ``${{ ... }}`` expressions: only ``matrix.*``, ``github.base_ref`` and the ``secrets.*`` a test gives are
  known; any other one fails the test, so a workflow cannot start depending on something this emulation does
  not provide.
- GitHub's variables are simulated: ``GITHUB_STEP_SUMMARY`` is a fresh file per step (collected per
  job), ``GITHUB_WORKSPACE``, ``GITHUB_SHA``, ``GITHUB_BASE_REF``, ``RUNNER_TEMP``, ``CI``.
- ``if: always()`` runs a step after a failure; a step without ``if`` runs only while all passed.
- ``uses:`` steps are emulated: ``actions/checkout`` copies this repository's ``examples/`` into the
  workspace (or into ``with.path``; a test decides what the base ref's checkout holds);
  ``actions/setup-python`` does nothing (this Python runs everything); ``actions/upload-artifact``
  copies ``with.path`` into an artifact folder (a single folder's contents, as v4 uploads it; an
  artifact name can be uploaded once, as in v4); ``actions/download-artifact`` copies artifacts
  matching ``with.pattern`` (or ``with.name``) into ``with.path``, one folder per artifact for a
  pattern, as v4 does without ``merge-multiple``. Any other action fails the test.
- ``pip`` is a stand-in on ``PATH`` that checks it is asked to install ``$SKYJO_REF_PACKAGE`` and
  installs nothing: skyjo-ref is already installed in this Python, whose ``bin`` is on ``PATH``.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from skyjo_ref.tournament.store import Store

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / "examples" / "ci" / "workflows"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")

Checkout = Callable[[Path, Mapping[str, Any]], None]


def copy_examples(dest: Path, options: Mapping[str, Any]) -> None:
    """``actions/checkout``: this repository's examples (what a bot repository holds), nothing else."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "examples" / "ci", dest / "examples" / "ci")
    shutil.copytree(REPO / "examples" / "python", dest / "examples" / "python")


@dataclass
class StepRun:
    job: str
    name: str
    returncode: int
    output: str


@dataclass
class Emulator:
    """Runs one workflow's jobs locally (see the module docstring for what is emulated and how)."""

    root: Path
    checkout: Checkout = copy_examples
    context: dict[str, str] = field(default_factory=dict)  # github.* values
    steps: list[StepRun] = field(default_factory=list)
    summaries: dict[str, str] = field(default_factory=dict)  # job instance -> its steps' summaries
    failed_jobs: list[str] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)  # secrets.* values

    def __post_init__(self) -> None:
        self.artifacts = self.root / "artifacts"
        self.artifacts.mkdir(parents=True)
        self.bin = self.root / "bin"
        self.bin.mkdir()
        pip = self.bin / "pip"
        pip.write_text(
            textwrap.dedent(
                """\
                #!/bin/sh
                # the workflow's install step: skyjo-ref is already installed in the test's Python
                [ "$1" = install ] && [ "$2" = "$SKYJO_REF_PACKAGE" ] && [ $# -eq 2 ] && exit 0
                echo "pip stand-in: expected 'pip install \\"\\$SKYJO_REF_PACKAGE\\"', got: pip $*" >&2
                exit 1
                """
            ),
            encoding="utf-8",
        )
        pip.chmod(0o755)

    def run(self, workflow: Mapping[str, Any]) -> None:
        jobs: dict[str, Any] = workflow["jobs"]
        for name in self._order(jobs):
            job = jobs[name]
            matrix = (job.get("strategy") or {}).get("matrix") or {}
            keys = sorted(matrix)
            instances = [
                dict(zip(keys, (str(v) for v in values), strict=True))
                for values in (itertools.product(*(matrix[k] for k in keys)) if keys else [()])
            ]
            labels = [name + "".join(f"-{v}" for v in instance.values()) for instance in instances]
            # a matrix's jobs run at once, each on its own workspace, as on GitHub's runners
            with ThreadPoolExecutor(max_workers=len(instances)) as pool:
                runs = list(pool.map(self._job, labels, [workflow] * len(labels), [job] * len(labels), instances))
            for steps in runs:
                self.steps += steps

    @staticmethod
    def _order(jobs: Mapping[str, Any]) -> list[str]:
        done: list[str] = []
        while len(done) < len(jobs):
            ready = [n for n, j in jobs.items() if n not in done and set(_as_list(j.get("needs"))) <= set(done)]
            assert ready, f"jobs with needs that cannot be met: {sorted(set(jobs) - set(done))}"
            done += ready
        return done

    def _expand(self, text: str, matrix: Mapping[str, str]) -> str:
        def value(found: re.Match[str]) -> str:
            expr = found.group(1)
            if expr.startswith("matrix.") and expr[len("matrix.") :] in matrix:
                return matrix[expr[len("matrix.") :]]
            if expr.startswith("github.") and expr[len("github.") :] in self.context:
                return self.context[expr[len("github.") :]]
            if expr.startswith("secrets.") and expr[len("secrets.") :] in self.secrets:
                return self.secrets[expr[len("secrets.") :]]
            raise AssertionError(f"the emulation does not know the expression ${{{{ {expr} }}}}")

        return EXPRESSION.sub(value, text)

    def _job(
        self, label: str, workflow: Mapping[str, Any], job: Mapping[str, Any], matrix: Mapping[str, str]
    ) -> list[StepRun]:
        workspace = self.root / "jobs" / label / "workspace"
        temp = self.root / "jobs" / label / "temp"
        workspace.mkdir(parents=True)
        temp.mkdir()
        shell = ((job.get("defaults") or workflow.get("defaults") or {}).get("run") or {}).get("shell", "bash")
        assert shell == "bash", f"{label}: the emulation runs shell: bash steps only"
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
        base_env.update(
            {
                "PATH": os.pathsep.join([str(self.bin), str(Path(sys.executable).parent), os.environ["PATH"]]),
                "CI": "true",
                "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": str(workspace),
                "GITHUB_SHA": self.context.get("sha", "0" * 40),
                "GITHUB_BASE_REF": self.context.get("base_ref", ""),
                "RUNNER_TEMP": str(temp),
                "COLUMNS": "200",
            }
        )
        for scope in (workflow.get("env"), job.get("env")):
            base_env.update({k: self._expand(str(v), matrix) for k, v in (scope or {}).items()})
        failed = False
        summary = ""
        steps: list[StepRun] = []
        for number, step in enumerate(job["steps"]):
            condition = str(step.get("if", "")).strip()
            assert condition in ("", "always()"), f"{label}: the emulation knows `if: always()` only"
            if failed and condition != "always()":
                continue
            name = self._expand(str(step.get("name") or step.get("uses") or step.get("run", "")), matrix)
            if "uses" in step:
                self._action(label, step, workspace, matrix)
                steps.append(StepRun(label, name, 0, ""))
                continue
            summary_file = temp / f"step_summary_{number}"
            summary_file.touch()
            env = {**base_env, "GITHUB_STEP_SUMMARY": str(summary_file)}
            env.update({k: self._expand(str(v), matrix) for k, v in (step.get("env") or {}).items()})
            script = temp / f"step_{number}.sh"
            script.write_text(self._expand(step["run"], matrix), encoding="utf-8")
            cwd = workspace / self._expand(str(step.get("working-directory", ".")), matrix)
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=100,
            )
            steps.append(StepRun(label, name, done.returncode, done.stdout + done.stderr))
            summary += summary_file.read_text(encoding="utf-8")
            failed = failed or done.returncode != 0
        self.summaries[label] = summary
        if failed:
            self.failed_jobs.append(label)
        return steps

    def _action(self, label: str, step: Mapping[str, Any], workspace: Path, matrix: Mapping[str, str]) -> None:
        uses = str(step["uses"])
        options = {k: self._expand(str(v), matrix) for k, v in (step.get("with") or {}).items()}
        action = uses.split("@")[0]
        if action == "actions/checkout":
            self.checkout(workspace / options.get("path", "."), options)
        elif action == "actions/setup-python":
            pass
        elif action == "actions/upload-artifact":
            name = options["name"]
            target = self.artifacts / name
            assert not target.exists(), f"{label}: artifact {name!r} uploaded twice (v4 refuses it)"
            paths = [workspace / p for p in options["path"].split("\n") if p.strip()]
            present = [p for p in paths if p.exists()]
            if not present:
                assert options.get("if-no-files-found", "warn") != "error", f"{label}: nothing at {paths} to upload"
                return
            if len(present) == 1 and present[0].is_dir():
                shutil.copytree(present[0], target)  # a folder's contents, not the folder
            else:
                target.mkdir()
                for p in present:
                    rel = p.relative_to(workspace)
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    (shutil.copytree if p.is_dir() else shutil.copyfile)(p, target / rel)
        elif action == "actions/download-artifact":
            dest = workspace / options.get("path", ".")
            if "name" in options:
                shutil.copytree(self.artifacts / options["name"], dest, dirs_exist_ok=True)
            else:
                names = sorted(a.name for a in self.artifacts.iterdir() if fnmatch.fnmatch(a.name, options["pattern"]))
                assert names, f"{label}: no artifact matches {options['pattern']!r}"
                for name in names:
                    shutil.copytree(self.artifacts / name, dest / name)
        else:
            raise AssertionError(f"{label}: the emulation does not know the action {uses}")


def _as_list(value: Any) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def ratings_json(folder: Path, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "ratings", str(folder), "--json", "-"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_league_workflow_merges_its_shards_into_the_unsharded_tables(tmp_path: Path) -> None:
    workflow = load("league.yml")
    shards = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    assert int(workflow["env"]["SHARDS"]) == len(shards)  # the matrix and --shard I/N agree
    emulator = Emulator(tmp_path / "ci")
    emulator.run(workflow)
    for step in emulator.steps:
        assert step.returncode == 0, f"{step.job}: {step.name}:\n{step.output}"
    assert [s.job for s in emulator.steps if s.name.startswith("Play shard")] == ["shard-1", "shard-2", "shard-3"]
    assert not emulator.failed_jobs

    # the merged store equals an unsharded run of the same config, byte for byte
    league = emulator.artifacts / "league"
    whole = tmp_path / "whole"
    copy_examples(whole, {})
    played = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", "examples/ci/league.yaml", "--output", "unsharded"],
        cwd=whole,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert played.returncode == 0, played.stderr
    unsharded = ratings_json(whole / "unsharded", whole)
    assert (league / "ratings.json").read_text(encoding="utf-8") == unsharded  # `ratings --json FILE`, in the job

    # the job's page got the summary; the artifact holds the store, its records and the report
    assert emulator.summaries["shard-2"].startswith("## ci-league: Elo (shard 2/3)")
    summary = emulator.summaries["merge"]
    assert summary.startswith("## ci-league: Elo (merged from 3 stores)")
    assert "### Leaderboard" in summary and "✅ No bot forfeited, was struck or crashed." in summary
    assert (league / "results.sqlite").is_file() and (league / "report.html").is_file()
    assert len(list((league / "games").glob("*.json"))) == len(list((whole / "unsharded" / "games").glob("*.json")))
    tables = next(s for s in emulator.steps if s.name == "Tables").output
    assert "ci-league: Elo: Plackett-Luce Elo (greedy = 1500)" in tables  # plain lines in the job's log


WORSE_BOT = '''\
"""Main's version of the bot in the emulated base-ref checkout: it plays at random (the PR improves it)."""

import random

from skyjo_bot import Action, Bot, View


class MinimalBot(Bot):
    def decide(self, view: View) -> Action:
        return random.Random(len(view.legal_actions)).choice(view.legal_actions)
'''


def test_the_gate_workflow_passes_a_better_pull_request_and_fails_a_broken_one(tmp_path: Path) -> None:
    workflow = load("gate.yml")

    def checkout(worse_in: str) -> Checkout:
        def run(dest: Path, options: Mapping[str, Any]) -> None:
            copy_examples(dest, options)
            is_base = options.get("ref") == "main"
            if is_base == (worse_in == "main"):
                (dest / "examples" / "python" / "minimal_bot.py").write_text(WORSE_BOT, encoding="utf-8")

        return run

    secrets = {"GATE_SECRET": "the-gate-secret-of-this-repository"}
    better = Emulator(tmp_path / "better", checkout("main"), {"base_ref": "main", "sha": "1" * 40}, secrets=secrets)
    better.run(workflow)
    gate = next(s for s in better.steps if s.name == "Gate")
    assert gate.returncode == 0, gate.output  # accepted: the job passes
    assert not better.failed_jobs
    assert better.summaries["gate"].startswith("## ✅ Gate accepted: `minimal_bot.candidate` vs `minimal_bot.baseline`")
    gate_json = json.loads((better.artifacts / "gate" / "gate.json").read_text(encoding="utf-8"))
    assert str(gate_json["seed"]).startswith("secret-") and secrets["GATE_SECRET"] not in json.dumps(gate_json)
    assert (better.artifacts / "gate" / "gate.json").is_file() and (
        better.artifacts / "gate" / "results.sqlite"
    ).is_file()

    # a pull request whose bot does not even compile: the gate exits 2 and the job fails
    def broken(dest: Path, options: Mapping[str, Any]) -> None:
        copy_examples(dest, options)
        if options.get("ref") != "main":
            (dest / "examples" / "python" / "minimal_bot.py").write_text("class MinimalBot(\n", encoding="utf-8")

    worse = Emulator(tmp_path / "broken", broken, {"base_ref": "main", "sha": "2" * 40}, secrets=secrets)
    worse.run(workflow)
    gate = next(s for s in worse.steps if s.name == "Gate")
    assert gate.returncode == 2 and "SyntaxError" in gate.output, gate.output
    assert worse.failed_jobs == ["gate"]
    assert [s.name for s in worse.steps][-1] == "Keep the gate's store"  # if: always() still ran


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def test_the_living_league_plays_only_what_each_push_changed(tmp_path: Path) -> None:
    """Two pushes in a row: the first plays the whole league into the store branch, the second (one bot
    changed) plays only that bot's games, on secret deals, and pushes the store back."""
    workflow = load("living-league.yml")
    assert workflow["concurrency"] == {"group": "living-league", "cancel-in-progress": False}
    remote = tmp_path / "origin.git"  # the repository's remote, holding the store's branch (created once)
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    seed = tmp_path / "seed"
    git("init", "-q", str(seed), cwd=tmp_path)
    git("checkout", "-q", "--orphan", "league-store", cwd=seed)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "store", cwd=seed)
    git("push", "-q", str(remote), "league-store", cwd=seed)
    secret = {"LEAGUE_SECRET": "a-secret-only-the-operator-knows"}

    def checkout(changed: bool) -> Checkout:
        def run(dest: Path, options: Mapping[str, Any]) -> None:
            if options.get("ref") == "league-store":
                git("clone", "-q", "--branch", "league-store", str(remote), str(dest), cwd=tmp_path)
                return
            copy_examples(dest, options)
            if changed:  # the push: a new version of one bot
                bot = dest / "examples" / "python" / "minimal_bot.py"
                bot.write_text(bot.read_text(encoding="utf-8") + "\n# tuned\n", encoding="utf-8")

        return run

    outputs = []
    stores = []
    for push, changed in (("1", False), ("2", True)):
        emulator = Emulator(tmp_path / f"push{push}", checkout(changed), {"sha": push * 40}, secrets=secret)
        emulator.run(workflow)
        for step in emulator.steps:
            assert step.returncode == 0, f"{step.job}: {step.name}:\n{step.output}"
        assert (emulator.artifacts / "league-store" / "results.sqlite").is_file()  # the backup
        outputs.append(" ".join(next(s for s in emulator.steps if s.name == "Play what changed").output.split()))
        stores.append(tmp_path / f"branch-after-push{push}")  # the store as the branch holds it now
        git("clone", "-q", "--branch", "league-store", str(remote), str(stores[-1]), cwd=tmp_path)
    assert "adaptive schedule:" in outputs[0] and "bot minimal is a new version" in outputs[1]
    assert len(git("log", "--oneline", cwd=stores[1]).splitlines()) == 3  # the empty start, one commit per push

    with Store(stores[0] / "league", create=False) as first, Store(stores[1] / "league", create=False) as second:
        before, after = set(first.finished_keys()), set(second.finished_keys())
        rounds_before = len(first.rounds())
        assert len(second.rounds()) >= rounds_before and second.rounds()[:rounds_before] == first.rounds()
        later_blocks = {(tuple(t), d) for r in second.rounds()[rounds_before:] for t, d in r["blocks"]}
        added = [g for g in second.games() if g.ref not in before]
        replayed = [g for g in added if (g.id.table, g.id.deal) not in later_blocks]
        # the second push played the changed bot's games of the stored rounds again, and nothing else of them
        assert replayed and all("minimal" in g.id.table for g in replayed)
        old_minimal = [g for g in first.games() if "minimal" in g.id.table]
        assert len(replayed) == len(old_minimal) and before <= after  # every game of push 1 is kept (history)
    tables = json.loads((stores[1] / "ratings.json").read_text(encoding="utf-8"))
    minimal = [v for v in tables["versions"] if v["bot"] == "minimal"]
    assert [v["current"] for v in minimal] == [False, True]
    record = json.loads(next((stores[1] / "league" / "games").glob("*.json")).read_text(encoding="utf-8"))
    assert record["meta"]["deals"]["source"] == "env:LEAGUE_SECRET"
    assert secret["LEAGUE_SECRET"] not in (stores[1] / "league" / "results.sqlite").read_bytes().decode("latin-1")

"""``skyjo-ref gate CANDIDATE BASELINE``: a sequential test (SPRT on duplicate deals) made for CI.

Exit codes (docs/cli.md, docs/gate.md): 0 accepted; 1 rejected; 4 ``--max-games``
reached without a verdict; 5 accepted, but ``--fail-on`` found a bot that forfeited,
was struck or crashed; 2 bad input; 3 could not finish; 130 interrupted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer
from rich.console import Console
from skyjo_bot.types import TimeControl

from skyjo_ref.cli import errors
from skyjo_ref.cli import markdown as summaries
from skyjo_ref.cli.failon import FailOnOption, check_fail_on, fail_message
from skyjo_ref.cli.gate_view import PLAIN_EVERY_GAMES, PLAIN_EVERY_S, GateProgress, final_lines, markdown
from skyjo_ref.cli.markdown import MarkdownOption
from skyjo_ref.cli.options import (
    DEFAULT_RULES,
    DEFAULT_TIME_CONTROL,
    BankMsOption,
    DecisionMsOption,
    ExecutorOption,
    GraceMsOption,
    InProcessOption,
    IsolationOption,
    MaxStrikesOption,
    ProgressEveryOption,
    ProgressSecondsOption,
    RuleOptionsOption,
    RulesOption,
    check_json_target,
    clock_from_cli,
    in_process_notes,
    isolation_from_cli,
    old_spelling,
    parse_executor,
    parse_shard,
    rules_from_cli,
    run_stoppable,
    stdout_taken,
    write_json,
)
from skyjo_ref.gate import DEFAULT_MAX_GAMES
from skyjo_ref.seating import block_size

if TYPE_CHECKING:  # the run's modules (gRPC, the referee, the bots' checks) and the store (SQLite, the statistics)
    # load when the gate plays, not for --help
    from skyjo_ref.execution.play import BackendFactory
    from skyjo_ref.gate.run import GateRun
    from skyjo_ref.gate.spec import GateSpec
    from skyjo_ref.gate.tracker import GateTracker
    from skyjo_ref.players import BotSpec
    from skyjo_ref.stats.sprt import Hypotheses
    from skyjo_ref.tournament.shard import Shard
    from skyjo_ref.tournament.store import Store

EXIT_ACCEPTED: Final = 0
EXIT_REJECTED: Final = 1
EXIT_INCONCLUSIVE: Final = 4
EXIT_FOR: Final = {"accepted": EXIT_ACCEPTED, "rejected": EXIT_REJECTED, "inconclusive": EXIT_INCONCLUSIVE}


def register(app: typer.Typer) -> None:
    app.command("gate")(gate)


def gate(
    candidate: Annotated[
        str,
        typer.Argument(
            metavar="CANDIDATE", help="The bot under test: greedy, path/bot.py[:Class], module:Class, 'cmd:COMMAND'."
        ),
    ],
    baseline: Annotated[
        str, typer.Argument(metavar="BASELINE", help="The bot it must beat (or match), in the same forms.")
    ],
    preset: Annotated[
        str | None,
        typer.Option(
            help="The question: 'no-regression' (is it no worse? Elo [-20, 0], the default) or 'gain' "
            "(does it gain? Elo [0, 20])."
        ),
    ] = None,
    elo0: Annotated[float | None, typer.Option(help="H0's Elo difference (overrides the preset).")] = None,
    elo1: Annotated[float | None, typer.Option(help="H1's Elo difference (overrides the preset).")] = None,
    alpha: Annotated[float, typer.Option(help="False positive rate: accepting when H0 holds.")] = 0.05,
    beta: Annotated[float, typer.Option(help="False negative rate: rejecting when H1 holds.")] = 0.05,
    elo_model: Annotated[
        str, typer.Option(help="What elo0/elo1 mean: 'logistic' Elo per game, or fishtest's 'normalized' Elo.")
    ] = "logistic",
    luck_adjust: Annotated[
        bool,
        typer.Option(
            "--luck-adjust", help="Subtract the cards' luck (an unbiased control variate): fewer games to a verdict."
        ),
    ] = False,
    max_games: Annotated[
        int, typer.Option(min=2, help="Stop without a verdict after this many games (a truncated test).")
    ] = DEFAULT_MAX_GAMES,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", min=1, max=256, help="Games at once.")] = 2,
    seed: Annotated[str, typer.Option(help="Seed of the deals (and of built-in bots).")] = "0",
    seed_secret_env: Annotated[
        str | None,
        typer.Option(
            "--seed-secret-env",
            metavar="NAME",
            help="Mix the secret in environment variable NAME into --seed: deals nobody can know in advance.",
        ),
    ] = None,
    rules: RulesOption = DEFAULT_RULES,
    option: RuleOptionsOption = None,
    decision_ms: DecisionMsOption = DEFAULT_TIME_CONTROL.decision_ms,
    bank_ms: BankMsOption = DEFAULT_TIME_CONTROL.bank_ms,
    max_strikes: MaxStrikesOption = DEFAULT_TIME_CONTROL.max_strikes,
    grace_ms: GraceMsOption = DEFAULT_TIME_CONTROL.grace_ms,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            metavar="DIR",
            help="The gate's store folder (default: runs/gate-CANDIDATE-vs-BASELINE; at K>2 players without --field, "
            "with -Kp added).",
        ),
    ] = None,
    output_alias: Annotated[Path | None, typer.Option("--out", hidden=True, help="Old spelling of --output.")] = None,
    new: Annotated[bool, typer.Option("--new", help="Set the folder's old results aside and start afresh.")] = False,
    json_file: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Write the result as JSON ('-': stdout, alone).")
    ] = None,
    markdown_file: MarkdownOption = None,
    plain: Annotated[bool, typer.Option("--plain", help="Plain progress lines even on a terminal.")] = False,
    fail_on: FailOnOption = None,
    progress_every: ProgressEveryOption = PLAIN_EVERY_GAMES,
    progress_seconds: ProgressSecondsOption = PLAIN_EVERY_S,
    shard_text: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="I/N",
            help="Play shard I of N of the deals into its own folder (exit 0 when done); merge the shards, "
            "then run the gate on the merged folder for the verdict.",
        ),
    ] = None,
    executor_text: ExecutorOption = None,
    in_process: InProcessOption = False,
    isolation_text: IsolationOption = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Run check-bot's quick cases on each bot before the first game: a bot that breaks the protocol "
            "fails the gate in seconds (exit 1), naming the case.",
        ),
    ] = False,
    players_given: Annotated[
        int | None,
        typer.Option(
            "--players-per-game",
            "-n",
            "-k",
            help="Seats at the table (2-8): the candidate against players-1 copies of the baseline, or against "
            "the baseline and players-2 --field bots [default: 2, or 2 + the --field bots].",
            show_default=False,
        ),
    ] = None,
    players_alias: Annotated[
        int | None, typer.Option("--players", hidden=True, help="Old spelling of --players-per-game.")
    ] = None,
    field_texts: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            metavar="BOT",
            help="A third (fourth, ...) bot at the table, in the forms above; repeat it for each of the players-2 "
            "seats. The block is then the balanced seat design and the score the candidate against the baseline.",
        ),
    ] = None,
) -> None:
    """Is CANDIDATE better than (or as good as) BASELINE? A sequential test that stops when the evidence is enough.

    Exit code: 0 accepted, 1 rejected, 4 no verdict within --max-games, 2 bad input, 3 could not finish,
    130 interrupted (a --shard exits 0 once its part is done). Rerunning the same command resumes from
    the store and gives the same verdict.
    """
    from skyjo_ref.gate.spec import GateSpec, bot_from_text, hypotheses_of, players_at_table

    stderr = Console(stderr=True, soft_wrap=True)
    stdout = stderr if stdout_taken(json_file, markdown_file) else Console(soft_wrap=True)
    isolation = isolation_from_cli(isolation_text, stderr)
    cand = bot_from_text(candidate, "candidate", in_process, isolation)
    base = bot_from_text(baseline, "baseline", in_process, isolation)
    players = players_at_table(
        old_spelling(players_given, players_alias, "--players-per-game", "--players"), field_texts or []
    )
    out = old_spelling(output, output_alias, "--output", "--out")
    field = tuple(bot_from_text(text, f"--field {text!r}", in_process, isolation) for text in field_texts or [])
    for note in in_process_notes((cand, base, *field), in_process):
        typer.echo(note, err=True)
    hypotheses = hypotheses_of(preset, elo0, elo1, alpha, beta, elo_model)
    _check_table(players, bool(field), hypotheses, luck_adjust, max_games)
    rule_set = rules_from_cli(rules, option or [])
    tc = clock_from_cli(decision_ms, bank_ms, max_strikes, grace_ms)
    seed = _seed(seed, seed_secret_env)
    shard = parse_shard(shard_text)
    check_json_target(json_file)
    summaries.check_markdown_target(markdown_file, json_file)
    fail_kinds = check_fail_on(fail_on)
    folder = _folder(out, cand, base, field, shard, players)
    spec = GateSpec(
        candidate=cand,
        baseline=base,
        hypotheses=hypotheses,
        rules=rule_set,
        time_control=tc,
        seed=seed,
        max_games=max_games,
        concurrency=concurrency,
        output=folder,
        luck=luck_adjust,
        shard=shard,
        players=players,
        field=field,
        check=check,
    )
    backend, spec = _backend(executor_text, spec)  # with a Dask executor, --in-process bots play inside the workers
    store = spec.open_store(
        new,
        on_wait=lambda m: stderr.print(f"note: {m}", highlight=False),
        on_set_aside=lambda moved: stderr.print(f"--new: the old results are kept in {moved}", highlight=False),
    )
    if not errors.DEBUG:  # bot process faults are reported as notes and kept in the store
        logging.getLogger("skyjo_ref.players").setLevel(logging.ERROR)
    progress = GateProgress(stderr, plain, progress_every, progress_seconds)
    observer = _Observer(progress)
    report = _Report(spec, store, stdout, stderr, json_file, markdown_file, time.monotonic())

    result = _play(spec, store, progress, observer, report, backend, in_process, stderr)
    raise typer.Exit(_exit_code(result, report, store, fail_kinds, sharded=shard is not None, stderr=stderr))


def _play(
    spec: GateSpec,
    store: Store,
    progress: GateProgress,
    observer: _Observer,
    report: _Report,
    backend: BackendFactory | None,
    in_process: bool,
    stderr: Console,
) -> GateRun:
    """The gate played; each way it can stop short ends in its exit code and one last line, the report written."""
    from skyjo_ref.checkbot.before import BotFailedCheck
    from skyjo_ref.execution.types import BotCannotRun, RunUnfinished
    from skyjo_ref.tournament.store import StoreError

    def on_update(tracker: GateTracker, played_now: int) -> None:
        observer.played = played_now
        progress.update(tracker, played_now)

    try:
        try:
            # an in-process bot's print() must not land among the verdict lines or in `--json -`
            with contextlib.redirect_stdout(sys.stderr) if in_process else contextlib.nullcontext():
                result = _run(spec, store, on_update, observer, backend)
        finally:
            progress.stop()
    except BotFailedCheck as exc:  # --check: a bot broke the protocol before any game was played
        report.finish(observer.played, str(exc), errors.EXIT_CHECK_FAILED)
        raise errors.UserError(str(exc), errors.EXIT_CHECK_FAILED) from None
    except BotCannotRun as exc:  # found only once it ran: the work stopped (exit 3), as for tournaments
        report.finish(observer.played, str(exc), errors.EXIT_UNFINISHED)
        raise errors.Unfinished(f"{exc}; fix the bot and run the same command again") from None
    except RunUnfinished as exc:
        report.finish(observer.played, str(exc), errors.EXIT_UNFINISHED)
        raise errors.Unfinished(
            f"{exc}; finished games are kept in {spec.output}: run the same command to go on"
        ) from None
    except StoreError as exc:
        report.finish(observer.played, str(exc), errors.EXIT_UNFINISHED)
        raise errors.Unfinished(f"{exc}; finished games are kept in {spec.output}") from None
    except KeyboardInterrupt:
        report.finish(observer.played, "interrupted", errors.EXIT_INTERRUPTED)
        stderr.print(
            f"interrupted: finished games are kept in {spec.output}; run the same command to go on", highlight=False
        )
        raise typer.Exit(errors.EXIT_INTERRUPTED) from None
    return result


def _exit_code(result: Any, report: _Report, store: Store, fail_kinds: Any, *, sharded: bool, stderr: Console) -> int:
    """The verdict's exit code (a shard's 0 once its part is done), --fail-on's when a bot faulted; reported."""
    from skyjo_ref.tournament.incidents import incidents

    exit_code = EXIT_FOR.get(result.tracker.verdict, errors.EXIT_UNFINISHED) if not sharded else EXIT_ACCEPTED
    report.failed = fail_message(incidents(store), fail_kinds)
    if report.failed is not None:
        stderr.print(f"error: {report.failed}", highlight=False, markup=False)
        if exit_code == EXIT_ACCEPTED:  # a rejection (1) or no verdict (4) fails the job already: kept
            exit_code = errors.EXIT_FAIL_ON
    report.finish(result.played, None, exit_code)
    return exit_code


def _check_table(players: int, field: bool, hypotheses: Hypotheses, luck_adjust: bool, max_games: int) -> None:
    """What the table's size allows: the luck features and normalized Elo at 2 players, a whole deal's block."""
    if luck_adjust and players != 2:
        raise errors.UserError(
            f"--luck-adjust works at 2 players only (its luck features), not --players-per-game {players}"
        )
    if players != 2 and hypotheses.model != "logistic":
        raise errors.UserError(f"--players-per-game {players} works with --elo-model logistic only (Elo at K players)")
    block = block_size(players, "balanced" if field else "rotations")
    if max_games < block:
        raise errors.UserError(f"--max-games {max_games}: expected at least one deal's {block} games")
    if luck_adjust and hypotheses.model != "logistic":
        raise errors.UserError("--luck-adjust works with --elo-model logistic only (normalized Elo rescales by sd)")


def _seed(seed: str, secret_env: str | None) -> str:
    """``--seed``, checked; with ``--seed-secret-env``, the deals' seed made from it and the secret."""
    if not seed.strip():
        raise errors.UserError("--seed: expected a non-empty seed")
    if secret_env is None:
        return seed
    from skyjo_ref.tournament.secret import SecretError, read_secret, secret_seed

    try:
        return secret_seed(read_secret(env=secret_env), seed)
    except SecretError as exc:
        raise errors.UserError(f"--seed-secret-env: {exc}") from None


def _folder(
    out: Path | None, cand: BotSpec, base: BotSpec, field: tuple[BotSpec, ...], shard: Shard | None, players: int
) -> Path:
    """The gate's store folder: ``--output``, or one named after its bots and table (another field or table size:
    another folder; a 2-player gate keeps the name it always had, so its store resumes)."""
    from skyjo_ref.gate.spec import field_names, table_names

    names = table_names(cand, base)
    with_field = "".join(f"-{name}" for name in field_names(cand, base, field))
    default = f"gate-{names[0]}-vs-{names[1]}" + (f"-with{with_field}" if field else "")
    if players > 2 and not field:  # a field names the table already
        default += f"-{players}p"
    folder = out if out is not None else Path("runs") / default
    if shard is not None and out is None:
        folder = folder.with_name(folder.name + shard.suffix)
    if folder.exists() and not folder.is_dir():
        raise errors.UserError(f"--output {folder}: exists and is not a folder: expected a folder for the gate's store")
    return folder


class _Observer:
    """What the referee backend reports (bot process faults), and how many games finished in this run."""

    def __init__(self, progress: GateProgress) -> None:
        self.progress = progress
        self.played = 0

    def started(self, total: int, done: int, to_play: int) -> None:
        pass

    def game_finished(self, game: Any, done: int, total: int) -> None:
        pass

    def note(self, message: str) -> None:
        self.progress.note(message)


def _backend(text: str | None, spec: GateSpec) -> tuple[BackendFactory | None, GateSpec]:
    """--executor: the backend (checked before the store is touched) and the spec with the games to keep
    submitted; None and the spec unchanged for the local referee."""
    executor = parse_executor(text)
    if executor is None or executor.is_local:
        return None, spec
    from skyjo_ref.execution.executor import backend_for

    factory, in_flight = backend_for(spec.tournament_config().room(), executor, spec.concurrency)
    return factory, dataclasses.replace(spec, concurrency=in_flight)


def _run(
    spec: GateSpec,
    store: Store,
    on_update: Callable[[GateTracker, int], None],
    observer: _Observer,
    backend: BackendFactory | None = None,
) -> GateRun:
    """The gate's event loop; SIGTERM stops it like Ctrl-C (finished games are kept)."""
    from skyjo_ref.gate.run import run_gate

    return run_stoppable(run_gate(spec, store, on_update, observer, backend))


@dataclass(slots=True)
class _Report:
    """Where the gate's result goes at the end, whatever the end."""

    spec: GateSpec
    store: Store
    stdout: Console
    stderr: Console
    json_file: Path | None
    markdown_file: Path | None
    started: float
    failed: str | None = None  # the --fail-on message, when it triggered

    def finish(self, played: int, stopped: str | None, exit_code: int) -> None:
        """The final lines, the JSON (on every exit once anything is stored) and the Markdown summary."""
        from skyjo_ref.tournament.incidents import incidents

        spec, stderr = self.spec, self.stderr
        try:
            info = self.store.info("gate")
            faults = self.store.faults()
            total_stored = self.store.count()
            found = incidents(self.store)
        finally:
            self.store.close()
        if info is None:
            return
        for line in final_lines(info):
            self.stdout.print(line, highlight=False, markup=False)
        if faults:
            stderr.print(f"note: {len(faults)} bot process faults; see {spec.output}", highlight=False)
        extra: dict[str, Any] = {
            "Candidate": spec.candidate.describe(),
            "Baseline": spec.baseline.describe(),
            **({"Field": ", ".join(f.describe() for f in spec.field)} if spec.field else {}),
            "Rules": spec.rules.to_dict(),
            "Seed": spec.seed,
            "Store": str(spec.output),
        }
        if stopped is not None:
            extra["Stopped"] = stopped
        if self.json_file is not None and (played > 0 or total_stored > 0):
            data = dict(info)
            data.update(
                {
                    "exit_code": exit_code,
                    "stopped": stopped,
                    "played_now": played,
                    "stored_games": total_stored,
                    "seconds": round(time.monotonic() - self.started, 3),
                    "output": str(spec.output),
                    "candidate_spec": spec.candidate.text or spec.candidate.describe(),
                    "baseline_spec": spec.baseline.text or spec.baseline.describe(),
                    "field_specs": [f.text or f.describe() for f in spec.field] if spec.field else None,
                    "rules": spec.rules.to_dict(),
                    "time_control": {key: getattr(spec.time_control, key) for key in TimeControl.KEYS},
                    "faults": [
                        {"bot": f.bot, "kind": f.kind, "detail": f.detail, "game": f.game_key} for f in faults[-100:]
                    ],
                    "incidents": [entry.to_json() for entry in found.values()],
                }
            )
            write_json(self.json_file, data)
        if self.markdown_file is not None:
            text = markdown(info, extra) + "\n" + summaries.faults_section(found, self.failed)
            try:
                summaries.write_markdown(self.markdown_file, text)  # appends to $GITHUB_STEP_SUMMARY
            except errors.UserError as exc:
                stderr.print(str(exc), highlight=False, markup=False)

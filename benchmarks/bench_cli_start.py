"""How long `skyjo-ref --help` (and `--version`, and each command's `--help`) takes, beside a bare Typer app.

    python benchmarks/bench_cli_start.py             # 15 runs of each, medians
    python benchmarks/bench_cli_start.py --runs 5

The reference is a bare Typer app written here with as many commands as skyjo-ref, each with a docstring and a
few options, and the same rich help: what any Typer command pays to print its help. Each program runs as a new
process (`python -c ...`), one after the other, interleaved run by run so that a busy moment hits both alike;
the median of each is reported, with its ratio to the bare app's `--help` (issue 31's target: 1.5 at most for the
root's `--help`, `--version` and every command's `--help`) and, for a command's `--help`, to the bare app's own
`tournament --help`: a Typer command's help imports Typer's parameter layer (pydantic), which the root's help
does not, so that second ratio is what skyjo-ref adds to what any Typer command pays.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skyjo_ref.cli.app import COMMANDS

BARE = """
from typing import Annotated
import typer

app = typer.Typer(name="bare", help="A bare Typer app.", no_args_is_help=True, add_completion=False)
"""
COMMAND = '''

@app.command("{name}")
def cmd_{index}(
    path: Annotated[str, typer.Argument(help="A path.")] = ".",
    games: Annotated[int, typer.Option(help="How many games.")] = 10,
    plain: Annotated[bool, typer.Option("--plain", help="Plain output.")] = False,
) -> None:
    """{help}"""
'''


def bare_app(folder: Path) -> Path:
    """A Typer app with one command per skyjo-ref command (same names, same help lines)."""
    text = BARE + "".join(
        COMMAND.format(name=name, index=i, help=line.replace('"', "'"))
        for i, (name, (_, line)) in enumerate(COMMANDS.items())
    )
    text += "\nif __name__ == '__main__':\n    app()\n"
    path = folder / "bare_app.py"
    path.write_text(text)
    return path


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bare = bare_app(Path(tmp))
        programs = {
            "bare --help": [sys.executable, str(bare), "--help"],
            "bare tournament --help": [sys.executable, str(bare), "tournament", "--help"],
            "skyjo-ref --help": [sys.executable, "-m", "skyjo_ref", "--help"],
            "skyjo-ref --version": [sys.executable, "-m", "skyjo_ref", "--version"],
            **{f"skyjo-ref {name} --help": [sys.executable, "-m", "skyjo_ref", name, "--help"] for name in COMMANDS},
        }
        times: dict[str, list[float]] = {name: [] for name in programs}
        for _ in range(args.runs):
            for name, argv in programs.items():
                times[name].append(timed(argv))
    base = statistics.median(times["bare --help"])
    base_command = statistics.median(times["bare tournament --help"])
    result = {
        name: {
            "median_s": round(statistics.median(t), 3),
            "ratio_to_bare_help": round(statistics.median(t) / base, 2),
            "ratio_to_bare_command_help": round(statistics.median(t) / base_command, 2),
        }
        for name, t in times.items()
    }
    print(f"{'':32} {'median':>9}  {'x bare --help':>13}  {'x bare CMD --help':>17}")
    for name, row in result.items():
        print(
            f"{name:32} {row['median_s']:7.3f} s  {row['ratio_to_bare_help']:11.2f} x  "
            f"{row['ratio_to_bare_command_help']:15.2f} x"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

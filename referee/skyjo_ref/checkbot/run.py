"""Running the cases against one bot, and what each came to (results, expected failures, reports for CI)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final, Literal

from skyjo_ref.checkbot.cases import CASES
from skyjo_ref.checkbot.context import CaseFailed, Context, NotApplicable, log_paths
from skyjo_ref.checkbot.launch import Room
from skyjo_ref.checkbot.referee import StreamEnded, scripted_referee
from skyjo_ref.execution.types import RunUnfinished
from skyjo_ref.players import BotSpec
from skyjo_ref.sandbox import check_sandbox, share_socket
from skyjo_ref.server.tls import ServerTls

Status = Literal["pass", "fail", "n/a"]
#: The longest a case may run before it is failed (a bot that hangs the check).
CASE_LIMIT_S: Final = 60.0


@dataclass(frozen=True, slots=True)
class Result:
    """What one case came to: ``expected`` the rule, ``did`` what the bot did, ``log`` where its output is."""

    case: str
    status: Status
    expected: str
    did: str
    log: str
    seconds: float
    expected_fail: bool = False  # listed in the expected failures

    @property
    def ok(self) -> bool:
        """Whether this result keeps the run green: a pass not listed, a listed failure, or not applicable."""
        if self.status == "n/a":
            return True
        return (self.status == "fail") == self.expected_fail

    @property
    def verdict(self) -> str:
        if self.status == "n/a":
            return "n/a"
        if self.expected_fail:
            return "expected fail" if self.status == "fail" else "PASS (listed as failing)"
        return "pass" if self.status == "pass" else "FAIL"


def unknown_cases(names: Sequence[str]) -> list[str]:
    return [n for n in names if n not in CASES]


def read_expected_failures(path: Path) -> list[str]:
    """Case names, one a line (``#`` comments and blank lines skipped); ValueError names an unknown one."""
    names = [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    names = [n for n in names if n]
    unknown = unknown_cases(names)
    if unknown:
        raise ValueError(f"{path}: unknown case {unknown[0]!r}: expected names from `skyjo-ref check-bot --list`")
    return names


async def check_bot(
    spec: BotSpec,
    cases: Sequence[str],
    log_dir: Path,
    expected_failures: Sequence[str] = (),
    on_result: Callable[[Result], None] = lambda result: None,
    *,
    first_failure: bool = False,
) -> list[Result]:
    """Run ``cases`` (in the registry's order) against the bot ``spec`` describes; its logs go to ``log_dir``.
    ``first_failure``: stop at the first case that fails (a league's check: the first fault is enough)."""
    check_sandbox(spec.sandbox)  # SandboxUnavailable: this machine cannot run the bot as the league would
    sockets = Path(tempfile.mkdtemp(prefix="skyjo-check-"))  # short: a unix socket path has ~100 characters
    (sockets / "s").mkdir()  # what an isolated bot sees of it (the folder above stays private)
    pki = Path(tempfile.mkdtemp(prefix="skyjo-check-tls-"))
    try:
        tls = make_tls(pki)
        async with scripted_referee(sockets / "s", tls) as referee:
            share_socket(sockets / "s")  # an isolated bot runs as an unprivileged uid
            assert referee.endpoints is not None
            room = Room.for_bot(spec, referee.endpoints, log_dir)
            ctx = Context(referee, room, tls_ca=pki / "ca.pem" if tls is not None else None)
            names = [n for n in CASES if n in cases]
            try:
                return await _run_all(ctx, names, expected_failures, on_result, first_failure)
            finally:
                await room.processes.aclose()
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
        shutil.rmtree(pki, ignore_errors=True)


async def _run_all(
    ctx: Context,
    names: Sequence[str],
    expected_failures: Sequence[str],
    on_result: Callable[[Result], None],
    first_failure: bool,
) -> list[Result]:
    """Each case in turn; once the bot has failed to connect without ever having connected, the rest are not
    run (each would wait for it in vain) and say so."""
    results: list[Result] = []
    try:
        for name in names:
            if results and not ctx.ever_connected and results[-1].status == "fail":
                first = next(r for r in results if r.status == "fail")
                result = Result(name, "fail", CASES[name].rule, f"not run: the bot never connected ({first.case}: "
                                f"{first.did})", first.log, 0.0, name in expected_failures)  # fmt: skip
            else:
                result = await run_case(ctx, name, name in expected_failures)
            results.append(result)
            on_result(result)
            if first_failure and result.status == "fail":
                break
    finally:
        await ctx.end_case(failed=True)
    return results


async def run_case(ctx: Context, name: str, expected_fail: bool) -> Result:
    case = CASES[name]
    started = time.monotonic()
    status: Status = "pass"
    try:
        async with asyncio.timeout(CASE_LIMIT_S):
            did = await case.run(ctx)
    except CaseFailed as failed:
        status, did, expected = "fail", failed.did, failed.expected
    except StreamEnded:  # the bot left while the referee was still sending to it
        status, did, expected = "fail", "closed its stream (or lost its connection) while the referee sent", case.rule
    except NotApplicable as why:
        status, did, expected = "n/a", str(why), case.rule
    except TimeoutError:
        status, did, expected = "fail", f"kept the check waiting over {CASE_LIMIT_S:g} s", case.rule
    except OSError as exc:
        status, did, expected = "fail", f"could not be started: {exc.strerror or exc}", case.rule
    except RunUnfinished as exc:  # the room could not start the process at all
        status, did, expected = "fail", f"could not be started: {exc}", case.rule
    else:
        expected = case.rule
    logs = log_paths(ctx.logs)
    await ctx.end_case(failed=status == "fail")
    return Result(name, status, expected, did, logs, time.monotonic() - started, expected_fail)


def make_tls(folder: Path) -> ServerTls | None:
    """A throwaway CA and a referee certificate for 127.0.0.1 (None when openssl is missing or fails)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    (folder / "referee.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n", encoding="utf-8")
    steps = [
        ["req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=check-bot CA"],
        ["req", *ec, "-keyout", "referee.key", "-out", "referee.csr", "-subj", "/CN=localhost"],
        ["x509", "-req", "-in", "referee.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", "referee.pem", "-days", "2", "-extfile", "referee.ext"],
    ]  # fmt: skip
    for step in steps:
        done = subprocess.run([openssl, *step], cwd=folder, capture_output=True, timeout=60, check=False)
        if done.returncode != 0:
            return None
    (folder / "ca.pem").chmod(0o644)
    folder.chmod(0o755)
    return ServerTls(folder / "referee.pem", folder / "referee.key")


def write_json(results: Sequence[Result], bot: str, path: Path) -> None:
    data = {
        "bot": bot,
        "ok": all(r.ok for r in results),
        "cases": [{**asdict(r), "verdict": r.verdict, "ok": r.ok} for r in results],
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def write_junit(results: Sequence[Result], bot: str, path: Path) -> None:
    """A JUnit XML report: one testcase a case; a failure when it is not ok, skipped when not applicable."""
    suite = ET.Element(
        "testsuite",
        name=f"check-bot {bot}",
        tests=str(len(results)),
        failures=str(sum(not r.ok for r in results)),
        skipped=str(sum(r.status == "n/a" for r in results)),
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    for r in results:
        item = ET.SubElement(suite, "testcase", classname="check-bot", name=r.case, time=f"{r.seconds:.3f}")
        if r.status == "n/a":
            ET.SubElement(item, "skipped", message=r.did)
        elif not r.ok:
            message = f"expected {r.expected}; the bot {r.did}" if r.status == "fail" else "passes, but is listed"
            ET.SubElement(item, "failure", message=message).text = f"log: {r.log}"
        ET.SubElement(item, "system-out").text = f"{r.did}\nlog: {r.log}"
    tree = ET.ElementTree(suite)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)

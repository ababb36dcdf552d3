"""``python -m skyjo_bot run SPEC``: play a bot on a skyjo-ref referee.

SPEC is ``path/to/bot.py``, ``path/to/bot.py:ClassName`` or
``package.module:ClassName``. The referee's address and the bot's token come
from ``--addr``/``--token`` or ``SKYJO_ADDR``/``SKYJO_TOKEN``; with ``--ca-file`` (or
``SKYJO_CA_FILE``) the bot speaks TLS to the referee.

Exit codes: 0 the session ended (the referee closed it, or SIGINT/SIGTERM);
1 the referee refused the session or could not be reached; 2 bad usage (no
such file, no bot, no address or token); 3 the bot ran out of memory under a
memory limit (``RLIMIT_AS``, set by a sandboxing referee).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import logging
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path

from skyjo_bot.bot import Bot
from skyjo_bot.client import BotClient, ConnectionLost, SessionRefused, run
from skyjo_bot.loader import BotSpecError, load_bot
from skyjo_bot.types import Action, View

#: Exit code when decide ran out of memory under a memory limit (the referee reads it as "memory limit").
EXIT_OUT_OF_MEMORY = 3


def _out_of_memory() -> None:
    os.write(2, b"skyjo_bot: out of memory (MemoryError in decide) under a memory limit: exiting\n")
    os._exit(EXIT_OUT_OF_MEMORY)


def _stop_at_file_size_limit() -> None:
    """Under a file size limit (set by a sandboxing referee), a write past it ends the bot, as it does any
    other program: Python ignores SIGXFSZ (the write would only fail); this restores its default action."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: no rlimits
        return
    if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY and hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)


def _stop_at_memory_limit(bot: Bot) -> None:
    """Under a memory limit (RLIMIT_AS, set by a sandboxing referee), a MemoryError in decide ends the
    process with :data:`EXIT_OUT_OF_MEMORY`: a process out of memory cannot be trusted to go on, and the
    referee restarts it and records why."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: no rlimits
        return
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        return
    decide = bot.decide

    async def settle(pending: object) -> Action:
        try:
            return await pending  # type: ignore[no-any-return,misc]
        except MemoryError:
            _out_of_memory()
            raise

    def guarded(view: View) -> Action:
        try:
            answer = decide(view)
        except MemoryError:
            _out_of_memory()
            raise
        if inspect.isawaitable(answer):
            return settle(answer)  # type: ignore[return-value]
        return answer

    bot.decide = guarded  # type: ignore[method-assign]


def _exit_with_parent(parent_pid: int) -> None:
    """End the session cleanly (SIGTERM to ourselves) once the process that started us is gone.

    A referee or tournament that starts bot processes sets SKYJO_PARENT_PID; if
    it dies without stopping them (kill -9, power loss), they follow it at once
    instead of retrying a dead address. On Linux a pidfd tells us the moment it
    exits; elsewhere the parent is checked every 0.2 s.
    """

    def watch() -> None:
        _wait_for_exit(parent_pid)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="skyjo-parent-watch", daemon=True).start()


def _wait_for_exit(parent_pid: int) -> None:
    """Return once ``parent_pid`` is no longer our parent (it exited, we were re-parented)."""
    pidfd = -1
    with contextlib.suppress(AttributeError, OSError):  # no pidfd_open (not Linux, old kernel), or already gone
        pidfd = os.pidfd_open(parent_pid)
    if pidfd >= 0:
        try:
            if _is_ancestor(parent_pid):  # checked after opening: it cannot have died unseen in between
                select.select([pidfd], [], [])  # readable once the process has exited
        finally:
            os.close(pidfd)
        return
    while _is_ancestor(parent_pid):  # pragma: no cover - the fallback without pidfds
        time.sleep(0.2)


def _is_ancestor(pid: int) -> bool:
    """Whether ``pid`` is our parent, or (Linux) its parent and so on: a bot started through a shell."""
    current = os.getppid()
    for _ in range(64):
        if current == pid:
            return True
        if current <= 1:
            return False
        try:
            stat = Path(f"/proc/{current}/stat").read_text()
        except OSError:
            return False
        current = int(stat.rsplit(")", 1)[1].split()[1])
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m skyjo_bot", description="Run a Skyjo bot on a skyjo-ref referee.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run_cmd = commands.add_parser("run", help="connect a bot to a referee and play until the session ends")
    run_cmd.add_argument(
        "spec", metavar="SPEC", help="the bot: path/to/bot.py, path/to/bot.py:ClassName or package.module:ClassName"
    )
    run_cmd.add_argument("--addr", help="referee address HOST:PORT (default: $SKYJO_ADDR)")
    run_cmd.add_argument("--token", help="the bot's token (default: $SKYJO_TOKEN)")
    run_cmd.add_argument("--name", help="the name sent in Hello (default: the bot's name)")
    run_cmd.add_argument(
        "--ca-file",
        metavar="PEM",
        help="speak TLS, trusting the CA that signed the referee's certificate (default: $SKYJO_CA_FILE)",
    )
    run_cmd.add_argument(
        "--client-cert", metavar="PEM", help="this bot's certificate, for mutual TLS (default: $SKYJO_CLIENT_CERT)"
    )
    run_cmd.add_argument("--client-key", metavar="PEM", help="the key of --client-cert (default: $SKYJO_CLIENT_KEY)")
    mode = run_cmd.add_mutually_exclusive_group()
    mode.add_argument(
        "--inline",
        dest="inline",
        action="store_true",
        default=True,
        help="call decide on the network thread (the default: lowest latency and CPU)",
    )
    mode.add_argument(
        "--thread",
        dest="inline",
        action="store_false",
        help="call decide in a worker thread, so the client keeps reading while the bot thinks",
    )
    run_cmd.add_argument(
        "--give-up", type=float, default=60.0, metavar="SECONDS", help="stop reconnecting after this long (default 60)"
    )
    run_cmd.add_argument("-v", "--verbose", action="count", default=0, help="-v: info, -vv: every message")
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    _stop_at_file_size_limit()  # before the bot's module runs
    try:
        bot = load_bot(args.spec)
    except BotSpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.name:
        bot.name = args.name
    _stop_at_memory_limit(bot)
    parent = os.environ.get("SKYJO_PARENT_PID", "")
    if parent.isdigit():
        _exit_with_parent(int(parent))
    try:
        tls = {"ca_file": args.ca_file, "client_cert": args.client_cert, "client_key": args.client_key}
        BotClient(bot, args.addr, args.token, **tls)  # checks address, token and TLS files before anything runs
        stats = run(bot, args.addr, args.token, inline=args.inline, give_up_after=args.give_up, **tls)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (SessionRefused, ConnectionLost) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    logging.getLogger("skyjo_bot").info(
        "played %d games, %d decisions (%d decide errors, %d strikes)",
        stats.games,
        stats.decisions,
        stats.decide_errors,
        stats.strikes,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

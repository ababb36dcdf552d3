"""A hostile league bot: at its first decision in each process it tries every attack a bot author could, and
prints one line per attack, ``ATTACK <name> blocked: ...`` or ``ATTACK <name> SUCCEEDED: ...``; then it plays.

tests/test_isolation.py runs it in a league against an honest bot and reads those lines from its logs. What it
knows of the host comes from its config ``env`` (paths the operator's files have there), as an author would
learn them from the league's public repository.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sqlite3
import uuid
from pathlib import Path

from skyjo_bot import Action, Bot, View

ME = uuid.uuid4().hex  # this process
ENV = os.environ


def report(name: str, succeeded: bool, detail: str) -> None:
    print(f"ATTACK {name} {'SUCCEEDED' if succeeded else 'blocked'}: {detail}", flush=True)


def attempt(path: str, mode: str = "r") -> str | None:
    """None if the existing file ``path`` opened for reading (``r``, ``rb``) or for appending (``a``: it must exist;
    a file of the same name made in the bot's own /tmp is no attack), else why not."""
    try:
        if "a" in mode:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
        else:
            with open(path, mode) as handle:
                handle.read(64)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror}"
    return None


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def foreign_pids() -> list[int]:
    """The processes this one can see that are not itself, its own children or its own sandbox's init (bubblewrap's
    PID 1, with no capabilities: signalling or tracing it reaches nothing but this bot's own sandbox)."""
    mine = {os.getpid()}
    if _cmdline(1).startswith(b"bwrap\0"):
        mine.add(1)
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in mine:
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                ppid = -1
            if ppid != os.getpid():
                out.append(int(entry))
    return out


def attacks() -> None:
    token = ENV.get("SKYJO_TOKEN", "")
    pids = foreign_pids()

    stolen = []
    for pid in pids:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        stolen += [v for v in environ if v.startswith(b"SKYJO_TOKEN=") and v != f"SKYJO_TOKEN={token}".encode()]
    report("read-token", bool(stolen), f"{len(stolen)} other tokens in {len(pids)} visible processes")

    signalled = []
    for pid in pids:
        try:
            os.kill(pid, 0)  # the permission check of a SIGSTOP or SIGKILL, without sending one
            signalled.append(pid)
        except OSError:
            pass
    report("signal", bool(signalled), f"could signal {signalled} of visible {pids}")

    readable = [
        p for p in pids if attempt(f"/proc/{p}/mem", "rb") is None or attempt(f"/proc/{p}/environ", "rb") is None
    ]
    referee = [p for p in pids if b"skyjo_ref" in _cmdline(p) and not _cmdline(p).startswith(b"bwrap")]
    report("read-referee", bool(readable or referee), f"readable: {readable}; referee processes visible: {referee}")

    libc = ctypes.CDLL(None, use_errno=True)
    traced = [pid for pid in pids if libc.ptrace(16, pid, None, None) == 0]  # PTRACE_ATTACH
    report("ptrace", bool(traced), f"attached to {traced}")

    leaked = [k for k in ("RUNNER_SECRET", "GITHUB_SHA") if k in ENV]
    report("runner-environment", bool(leaked), f"runner variables seen: {leaked}")

    config = attempt(ENV["LEAGUE_CONFIG"])
    report("read-config", config is None, config or "read the league's config (its seed deals every game)")

    try:
        games = os.listdir(ENV["LEAGUE_GAMES"])
        report("read-records", True, f"listed {len(games)} records")
    except OSError as exc:
        report("read-records", False, f"{type(exc).__name__}: {exc.strerror}")

    try:
        with sqlite3.connect(ENV["LEAGUE_STORE"], timeout=1) as db:
            db.execute("BEGIN EXCLUSIVE")
            db.execute("UPDATE seats SET rank = 1")
        report("write-store", True, "rewrote the results")
    except sqlite3.Error as exc:
        report("write-store", False, f"sqlite3: {exc}")
    for name in ("LEAGUE_CONFIG", "OTHER_BOT", "SDK_FILE"):
        problem = attempt(ENV[name], "a")
        report(f"write-{name.lower()}", problem is None, problem or f"can append to {ENV[name]}")
    problem = attempt(ENV["OTHER_BOT"])
    report("read-other-bot", problem is None, problem or "read the other bot's source")

    try:  # the referee's pid on the host, as an author could guess it
        os.kill(int(ENV["REFEREE_PID"]), signal.SIGKILL)
        report("kill-referee", True, f"SIGKILL sent to pid {ENV['REFEREE_PID']}")
    except OSError as exc:
        report("kill-referee", False, f"pid {ENV['REFEREE_PID']}: {type(exc).__name__}: {exc.strerror}")

    held = []
    address = ENV["SKYJO_ADDR"].removeprefix("unix:")
    for _ in range(int(ENV.get("FLOOD", "300"))):  # connections that never speak HTTP/2: the referee must go on
        try:
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(address)
            held.append(conn)
        except OSError:
            break
    globals()["_HELD"] = held  # kept open while the bot plays
    report("flood-referee", False, f"{len(held)} idle connections held open (the games must go on)")

    try:
        socket.create_connection(("127.0.0.1", int(ENV["LISTENER_PORT"])), timeout=2).close()
        report("loopback", True, "reached the host's loopback listener")
    except OSError as exc:
        report("loopback", False, f"{type(exc).__name__}: {exc.strerror}")

    setns = []
    for pid in [1, *pids]:
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        except OSError:
            continue
        if libc.setns(fd, 0) == 0:
            setns.append(pid)
        os.close(fd)
    report("setns", bool(setns), f"entered the network namespace of {setns}")

    moved = attempt("/sys/fs/cgroup/cgroup.procs", "a")
    report("leave-cgroup", moved is None, moved or "can write the root cgroup's cgroup.procs")

    if os.fork() == 0:  # a child that leaves the session and tries to outlive the run
        os.setsid()
        os.execv("/bin/sleep", ["sleep", ENV["OUTLIVE_MARK"]])
    report("outlive", False, "a setsid child sleeps; the test looks for it after the run")

    notes = Path("/tmp/notes")
    notes.mkdir(exist_ok=True)
    (notes / ME).write_text(ME)
    foreign = [p.name for p in notes.iterdir() if p.name != ME]
    for shared in ("/dev/shm", "/var/tmp"):
        with_notes = attempt(f"{shared}/skyjo-notes-{ME}", "w")
        if with_notes is None:
            foreign += [p for p in os.listdir(shared) if p.startswith("skyjo-notes-") and ME not in p]
    report("pass-notes", bool(foreign), f"notes of other processes found: {foreign}")
    channels(libc)


def channels(libc: ctypes.CDLL) -> None:
    """Kernel objects two sandboxes could share: locks on a file both can read, the uid's keyring, file watches,
    the kernel log. Each call that works is a channel (another process could see or set the same bits)."""
    import fcntl
    import struct

    shared = open(ENV["SDK_FILE"], "rb")  # held while the bot plays, as a channel would be
    globals()["_SHARED"] = shared
    done = []
    for name, command in (("posix", fcntl.F_SETLK), ("ofd", 37), ("ofd-query", 36)):  # 36/37: F_OFD_GETLK/SETLK
        try:
            fcntl.fcntl(shared, command, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 7, 1, 0))
            done.append(name)
        except OSError as exc:
            done.append(f"{name} refused ({exc.strerror})")
    try:
        fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)
        done.append("flock")
    except OSError as exc:
        done.append(f"flock refused ({exc.strerror})")
    report("lock-channel", any(" refused" not in d for d in done), f"on {ENV['SDK_FILE']}: {', '.join(done)}")

    key = libc.syscall(248, b"user", f"skyjo-note-{ME}".encode(), b"card", 4, -4)  # add_key(@u)
    found = libc.syscall(250, 10, -4, b"user", b"skyjo-note-leaked", 0)  # keyctl(KEYCTL_SEARCH, @u, ...)
    why = os.strerror(ctypes.get_errno())
    report("keyring", key >= 0 or found >= 0, f"add_key: {key}, search: {found} ({why})")

    watch = libc.inotify_init1(0)
    added = libc.inotify_add_watch(watch, ENV["SDK_FILE"].encode(), 0x20) if watch >= 0 else -1  # IN_OPEN
    report("watch-files", added >= 0, f"inotify_init1: {watch}, add_watch: {added} ({os.strerror(ctypes.get_errno())})")

    read = libc.klogctl(3, ctypes.create_string_buffer(4096), 4096)  # syslog(2): SYSLOG_ACTION_READ_ALL
    report("kernel-log", read >= 0, f"syslog: {read} ({os.strerror(ctypes.get_errno())})")


class Hostile(Bot):
    attacked = False

    def on_game_start(self, start: object) -> None:
        print(f"GAME {ME} {getattr(start, 'game_id', '?')}", flush=True)

    def decide(self, view: View) -> Action:
        if not Hostile.attacked:
            Hostile.attacked = True
            attacks()
        return view.legal_actions[0]

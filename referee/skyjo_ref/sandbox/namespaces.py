"""What this host allows (namespaces, a process cap), and the isolated view of the machine a bot gets.

Isolation (``isolation: strict``) runs each bot process under bubblewrap
(Debian's ``bubblewrap``, the sandbox Flatpak uses): a PID namespace of its own
(it sees and can signal no other process), a mount namespace holding only a
read-only runtime, its own files and a private ``/tmp``, no network but a
loopback of its own and the referee's ``unix:`` socket, IPC and UTS namespaces
of its own. It runs as an unprivileged **host** uid with no capabilities: as
root, bubblewrap sets the view up and ``setpriv`` drops to uid/gid 65534 with
an empty bounding set before the bot's program starts (a uid mapped inside a
user namespace would still be root on the host); as another user, the bot
keeps that user's uid inside a user namespace of its own. docs/sandbox.md
compares bubblewrap with nsjail and hand-written ``clone`` and says why.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from skyjo_ref.sandbox import seccomp
from skyjo_ref.sandbox.cgroups import pids_cgroups
from skyjo_ref.sandbox.limits import SandboxUnavailable

#: Linux's ``unshare`` flags used here (from <sched.h>).
CLONE_NEWUSER: Final = 0x10000000
CLONE_NEWNET: Final = 0x40000000

#: The bot's supervisor: it starts the bot under a plan, and kills its tree when the referee dies.
SUPERVISOR: Final = Path(__file__).with_name("supervisor.py")

#: The host uid and gid an isolated bot runs as when the referee is root (``nobody`` on Debian).
BOT_UID: Final = 65534
BOT_GID: Final = 65534

#: In bubblewrap's command line, where the supervisor puts the descriptor of the seccomp filter it loads.
SECCOMP_FD_SLOT: Final = "{seccomp_fd}"

#: Where an isolated bot finds the referee's socket, and its private writable folder.
SOCKET_DIR_INSIDE: Final = Path("/run/skyjo")
TMP_INSIDE: Final = Path("/tmp")
#: The size of the private /tmp when the bot has no ``file_size_mb`` limit.
DEFAULT_TMP_MB: Final = 64

#: What of the host's /etc an isolated process may need to run (the dynamic linker, alternatives' links, time zone,
#: openssl's configuration). Nothing secret: /etc/ssl/private is root's alone (0700), and the bot is not root.
_ETC: Final = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "passwd",
    "group",
    "ssl",  # openssl's configuration (node reads it at start) and the public CA certificates
)

#: The JDK's configuration folders (``/etc/java-17-openjdk``): Debian's JVM reads its logging, security and
#: jvm.cfg files through symlinks into them, so a Java bot cannot start without them.
_ETC_JAVA_GLOB: Final = "java-*-openjdk"


#: prctl(2) option: whether the process may be dumped, its memory read and ptrace'd by processes of its uid.
PR_SET_DUMPABLE: Final = 4


def protect_referee() -> None:
    """Make this process (the referee) not dumpable: processes of the same uid can then neither read its
    memory (``/proc/PID/mem``, ``environ``) nor ``ptrace`` it. Nothing against root with ``CAP_SYS_PTRACE``,
    which is why isolated bots never run as root."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def share_socket(folder: Path) -> None:
    """Let an isolated bot's unprivileged uid connect to the referee's socket(s) in ``folder`` (mounted alone
    at /run/skyjo; the private folder above it keeps other users of the host out)."""
    folder.chmod(0o755)
    for socket in folder.iterdir():
        socket.chmod(0o666)


def supervised(plan: dict[str, Any], argv: Sequence[str]) -> list[str]:
    """The command line that runs ``argv`` under its supervisor with ``plan`` (see supervisor.py)."""
    return [sys.executable, "-I", "-S", str(SUPERVISOR), json.dumps(plan), *argv]


def _probe(plan: dict[str, Any], argv: Sequence[str], what: str) -> str | None:
    """None if ``argv`` runs under ``plan`` here (through the supervisor, as bots do), else why not."""
    if not sys.platform.startswith("linux"):
        return f"{what} are a Linux feature (this is {sys.platform})"
    try:
        subprocess.run(
            supervised({"parent": os.getpid(), **plan}, argv),
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    except subprocess.CalledProcessError as exc:
        who = "root" if os.geteuid() == 0 else "an unprivileged user (are user namespaces disabled?)"
        said = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or ["no reason given"]
        return f"cannot create {what} as {who}: {said[0]}"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot create {what}: {exc}"
    return None


@functools.cache
def network_isolation() -> tuple[int, str | None]:
    """The ``unshare`` flags that give a (non-isolated) child its own network here, or (0, why not)."""
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    problem = _probe({"unshare": flags}, [sys.executable, "-I", "-S", "-c", ""], "network namespaces")
    return (0, problem) if problem is not None else (flags, None)


@functools.cache
def user_namespaces() -> str | None:
    """None if a bot can get a user namespace of its own here, else why not."""
    return _probe({"unshare": CLONE_NEWUSER}, [sys.executable, "-I", "-S", "-c", ""], "user namespaces")


def process_cap(quiet: bool = False) -> Literal["cgroup", "userns", "none"]:
    """How this machine caps one bot's processes, or :class:`SandboxUnavailable` saying why it cannot
    (``quiet``: "none" instead, for a default cap that is applied where it can be).

    A cgroup with ``pids.max`` (the referee sees a bot hit it, and can kill all
    of its processes), else a user namespace of the bot's own, in which
    ``RLIMIT_NPROC`` counts only the bot's processes (Linux 5.14+ counts it per
    user namespace; the fork that would pass the cap fails, unseen by the referee).
    Not for root: the kernel exempts uid 0 from ``RLIMIT_NPROC`` in every namespace.
    """
    try:
        pids_cgroups()
        return "cgroup"
    except SandboxUnavailable as no_cgroup:
        if os.geteuid() == 0:  # the kernel exempts uid 0 from RLIMIT_NPROC, in any user namespace
            if quiet:
                return "none"
            raise
        why_not = user_namespaces()
        if why_not is None:
            return "userns"
        if quiet:
            return "none"
        raise SandboxUnavailable("processes", f"{no_cgroup.reason}; and no user namespace: {why_not}") from None


# ------------------------------------------------------------------------------ isolation


@functools.cache
def isolation_problem() -> str | None:
    """None if bots can be isolated here (bubblewrap runs a probe with the very options bots get), else why not."""
    if not sys.platform.startswith("linux"):
        return f"isolation needs Linux namespaces (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed: it drops an isolated bot to an unprivileged uid"
    if seccomp.program() is None:
        return f"no seccomp filter is written for this architecture ({', '.join(seccomp.ARCHES)} only)"
    view = BotView(runtime=python_runtime(), binds=(), socket_dir=None, hidden=(), cwd=None, tmp_mb=1)
    return _probe(view.plan(), [sys.executable, "-I", "-S", "-c", ""], "an isolated sandbox (bwrap)")


def default_isolation() -> tuple[Literal["strict", "none"], str | None]:
    """A league's isolation when its config does not say: ``strict`` wherever this machine can isolate bots,
    else ``none`` with the one line that says so (never silently weaker)."""
    problem = isolation_problem()
    return ("strict", None) if problem is None else ("none", f"bots are not isolated: {problem}")


def python_runtime() -> tuple[Path, ...]:
    """The folders a Python bot needs read-only: the interpreter's installation, the virtual environment,
    and the SDK's packages (``skyjo_bot``, ``skyjo_proto``) wherever they are installed."""
    import skyjo_bot
    import skyjo_proto

    folders = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).parent]
    folders += [Path(skyjo_bot.__file__).parent, Path(skyjo_proto.__file__).parent]
    return _outermost(Path(os.path.realpath(p)) for p in folders)


def referee_code() -> Path:
    """The referee's own package, hidden from bots wherever it is installed (an SDK bot needs only ``skyjo_bot``)."""
    return Path(os.path.realpath(Path(__file__).parents[1]))


def _outermost(paths: Iterable[Path]) -> tuple[Path, ...]:
    """``paths`` without those inside another of them, in order (each mounted once)."""
    unique = sorted(set(paths), key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in unique:
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return tuple(kept)


def readable_by_all(path: Path) -> bool:
    """Whether an unprivileged uid may read ``path`` (a file, or a folder and everything in it) once it is
    mounted for it (the mount skips the folders above it)."""

    def ok(p: Path, folder: bool) -> bool:
        try:
            mode = p.stat().st_mode
        except OSError:
            return False
        need = stat.S_IROTH | (stat.S_IXOTH if folder else 0)
        return mode & need == need

    if path.is_file():
        return ok(path, False)
    for folder, _, names in os.walk(path):
        if not ok(Path(folder), True):
            return False
        if not all(ok(Path(folder) / n, False) for n in names if not (Path(folder) / n).is_symlink()):
            return False
    return True


@dataclass(frozen=True, slots=True)
class BotView:
    """What an isolated bot process sees of the machine: everything read-only but its private ``/tmp``.

    ``runtime``: folders every bot gets (the Python installation and the SDK);
    ``binds``: (source, where the bot sees it) for its own folder or files (skyjo_ref.botfiles);
    ``socket_dir``: the folder holding the referee's socket, seen as ``/run/skyjo``;
    ``hidden``: paths emptied where they fall inside what is mounted (the
    store, the config, other bots' files, the referee's code); ``cwd``: where it starts.
    """

    runtime: tuple[Path, ...]
    binds: tuple[tuple[Path, Path], ...]
    socket_dir: Path | None
    hidden: tuple[Path, ...]
    cwd: Path | None
    tmp_mb: int = DEFAULT_TMP_MB
    network: bool = False

    def mounted(self) -> tuple[Path, ...]:
        """Where something of the host is visible inside."""
        return (*self.runtime, *(inside for _, inside in self.binds))

    def plan(self) -> dict[str, Any]:
        """The supervisor's plan keys that isolate a process: bubblewrap's command line, and the seccomp
        filter (hex) it loads from the descriptor the supervisor puts at :data:`SECCOMP_FD_SLOT`."""
        return {"isolate": self.bwrap(), "seccomp": (seccomp.program() or b"").hex()}

    def bwrap(self) -> list[str]:
        """The bubblewrap command line (up to and including ``--``) that sets up this view."""
        argv = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        argv += ["--seccomp", SECCOMP_FD_SLOT]  # seccomp.py: no locks, keyrings, watches, ... across sandboxes
        if not self.network:
            argv.append("--unshare-net")  # a loopback of its own, up; nothing of the host's network
        argv += ["--die-with-parent", "--new-session", "--hostname", "skyjo-bot"]
        if os.geteuid() != 0:
            argv.append("--unshare-user")  # the user's own uid, inside a user namespace of its own; no capabilities
        argv += ["--ro-bind", "/usr", "/usr"]
        for link in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
            host = Path("/") / link
            if host.is_symlink():
                argv += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                argv += ["--ro-bind", str(host), str(host)]
        argv += ["--perms", "0755", "--dir", "/etc"]  # bubblewrap would make it 0700: nobody could look inside
        for name in _ETC:
            argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        for java in sorted(Path("/etc").glob(_ETC_JAVA_GLOB)):
            argv += ["--ro-bind", str(java), str(java)]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        argv += ["--perms", "1777", "--size", str(self.tmp_mb * 1024 * 1024), "--tmpfs", str(TMP_INSIDE)]
        made: set[Path] = {Path("/"), TMP_INSIDE}

        def parents(path: Path) -> list[str]:  # bubblewrap would make the folders above a mount point 0700
            out: list[str] = []
            for folder in reversed(path.parents):
                if folder not in made and not _under_system(folder):
                    made.add(folder)
                    out += ["--perms", "0755", "--dir", str(folder)]
            return out

        for path in self.runtime:
            if not _under_system(path):
                argv += [*parents(path), "--ro-bind", str(path), str(path)]
        for source, inside in self.binds:
            argv += [*parents(inside), "--ro-bind", str(source), str(inside)]
        if self.socket_dir is not None:
            argv += [*parents(SOCKET_DIR_INSIDE), "--ro-bind", str(self.socket_dir), str(SOCKET_DIR_INSIDE)]
        mounted = self.mounted()
        for path in self.hidden:
            if path.exists() and any(path.is_relative_to(m) and path != m for m in mounted):
                argv += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        argv += ["--chdir", str(self.cwd if self.cwd is not None else TMP_INSIDE)]
        if os.geteuid() == 0:  # set up as root, then the bot's program as an unprivileged host uid, no capabilities
            argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", shutil.which("setpriv") or "setpriv"]
            argv += [f"--reuid={BOT_UID}", f"--regid={BOT_GID}", "--clear-groups", "--inh-caps=-all"]
            argv += ["--bounding-set=-all", "--no-new-privs"]
        argv.append("--")
        return argv


def _under_system(path: Path) -> bool:
    """Whether ``path`` is already in every view (under /usr)."""
    return path.is_relative_to("/usr")

"""A Python environment an unprivileged user can run, for the tests that run the referee as ``nobody``.

The suite's interpreter and checkout usually lie in a private folder (a pyenv under /root, a clone in a 0700
home): ``nobody`` cannot even start them, and the tests as a normal user would have to skip. This builds, in
about a second, a virtual environment in a world-readable temporary folder from the system's ``python3`` (same
ABI as the suite's), with the suite's installed packages hard-linked into it (no copy, no download; a link
shares its file's mode, so files of the suite's environment that were not readable by all become so) and this
checkout's own packages copied.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

SYSTEM_PYTHON = Path("/usr/bin/python3")


@dataclass(frozen=True)
class UserEnv:
    folder: Path
    python: Path
    site: Path

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _abi(python: Path) -> str:
    done = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_config_var('SOABI'))"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _own_packages() -> list[Path]:
    """This checkout's packages (installed editable: they live in the checkout, not in site-packages)."""
    import skyjo_bot
    import skyjo_proto
    import skyjo_ref

    return [Path(module.__file__ or "").resolve().parent for module in (skyjo_ref, skyjo_bot, skyjo_proto)]


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def user_env() -> UserEnv | str:
    """The environment, or why this machine cannot give one (then the caller skips, saying so)."""
    if not SYSTEM_PYTHON.exists():
        return f"no system interpreter at {SYSTEM_PYTHON}"
    ours = sysconfig.get_config_var("SOABI")
    if _abi(SYSTEM_PYTHON) != ours:
        return f"{SYSTEM_PYTHON} is not {ours}: the suite's compiled packages would not load in it"
    folder = Path(tempfile.mkdtemp(prefix="skyjo-user-env-"))
    folder.chmod(0o755)
    venv = folder / "venv"
    made = subprocess.run(
        [str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True
    )
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        return f"cannot make a virtual environment with {SYSTEM_PYTHON}: {made.stderr.strip()[-200:]}"
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    ours_site = Path(sysconfig.get_path("purelib"))
    for entry in ours_site.iterdir():
        if entry.name.startswith("__editable__") or entry.name == "__pycache__":
            continue
        if entry.is_dir():
            shutil.copytree(entry, site / entry.name, copy_function=_link_or_copy, symlinks=True)
        else:
            _link_or_copy(str(entry), str(site / entry.name))
    for package in _own_packages():
        shutil.copytree(package, site / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    for path, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(path, name), 0o755)
        for name in files:
            file = os.path.join(path, name)
            if not os.path.islink(file):
                os.chmod(file, os.stat(file).st_mode | 0o444)
    return UserEnv(folder, venv / "bin" / "python3", site)


if __name__ == "__main__":  # python tests/user_env.py: build one and say where (to try it by hand)
    env = user_env()
    print(env if isinstance(env, str) else env.python, file=sys.stderr)

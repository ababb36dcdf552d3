"""The Go toolchain for the tests: Go 1.26 with a shared build cache, and a copy of the Go SDK's template as
`skyjo-ref new-bot DIR --lang go` writes it (tests/test_sdk_go.py, test_stub_generation.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from sdk_harness import ROOT
from skyjo_ref.newbot import new_bot

SDK = ROOT / "sdk" / "go"
TEMPLATE = SDK / "template"
PLACEHOLDER = "__BOT_NAME__"
#: Where the Go toolchain is (the machine's Go 1.26; Debian's /usr/bin/go is too old for grpc-go 1.85).
GO_PATHS = ("/usr/local/go/bin", str(Path.home() / "go" / "bin"))


def go_env() -> dict[str, str]:
    """The environment for every go command of the tests: Go 1.26 first on PATH, Go's own build cache
    (content-addressed and safe for concurrent use: a second run, or CI on the same machine, only links)."""
    path = os.pathsep.join([*GO_PATHS, os.environ.get("PATH", "/usr/bin:/bin")])
    go = shutil.which("go", path=path)
    assert go, "Go is not installed: Go 1.26 (https://go.dev/dl) in /usr/local/go, see scripts/install-test-deps"
    version = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, check=True).stdout.strip()
    assert tuple(map(int, re.findall(r"\d+", version)[:2])) >= (1, 26), f"{go} is {version}: the Go SDK needs Go 1.26"
    env = {**os.environ, "PATH": f"{Path(go).parent}{os.pathsep}{path}"}
    env.pop("GOFLAGS", None)
    return env


def new_go_bot(folder: Path, name: str) -> Path:
    """The project `skyjo-ref new-bot FOLDER --lang go` writes (the folder's last part is the bot's name)."""
    assert folder.name == name
    new_bot(folder, "go")
    return folder

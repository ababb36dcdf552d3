"""The committed generated protocol code matches a fresh run of scripts/gen_proto.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generated_code_is_fresh() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_proto.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"stale generated code:\n{done.stdout}{done.stderr}"


def test_check_detects_stale_code(tmp_path: Path) -> None:
    """--check must fail when a generated file differs (run on a copy of the tree)."""
    import shutil

    copy = tmp_path / "repo"
    for part in ("proto", "scripts", "sdk/skyjo_proto"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "sdk" / "skyjo_proto" / "skyjo" / "v1" / "skyjo_pb2.py"
    target.write_text(target.read_text() + "\n# edited by hand\n")
    done = subprocess.run(
        [sys.executable, str(copy / "scripts" / "gen_proto.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "skyjo_pb2.py (differs)" in done.stderr


def test_generated_package_imports() -> None:
    from skyjo_proto.skyjo.v1 import skyjo_pb2, skyjo_pb2_grpc

    assert skyjo_pb2.DESCRIPTOR.package == "skyjo.v1"
    assert hasattr(skyjo_pb2_grpc, "BotServiceStub")

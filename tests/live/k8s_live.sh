#!/usr/bin/env bash
# `make k8s-live`: the dev overlay's rendered workloads, run for real under podman kube play,
# and a smoke test through the gateway. See deploy/k8s/README.md ("Running it for real").
#
#  1. Debian packages it needs (podman, netavark, aardvark-dns, runc, mmdebstrap), if missing.
#  2. Images, with no container registry: a Debian bookworm base by mmdebstrap; stand-ins for
#     python:3.11-slim, postgres:16, nats:2.10 and the OpenTelemetry collector from Debian
#     packages (images/); the project's image from its Dockerfile on the Python stand-in.
#  3. kubectl kustomize deploy/k8s/overlays/dev, then podman_adapt.py, then up.sh.
#  4. smoke.py: ready, log in with the generated admin Secret, create a project, see it in
#     the activity feed and the change feed (through NATS), read it back, see a trace at
#     the collector.
#  5. Whatever happened (a trap): down.sh removes the pods, volumes, secrets and network this
#     run created, and nothing else.
# The base and stand-in images stay in podman's storage, a cache for the next run
# (K8S_LIVE_FRESH=1 builds them again); the project's image is built afresh (no layer cache,
# so no stale layers pile up) and removed at the end. Only the gateway is published, on
# 127.0.0.1:$K8S_LIVE_PORT (18080).
set -euo pipefail
cd "$(dirname "$0")/../.."
live=tests/live
python=${PYTHON:-.venv/bin/python}
kubectl=${KUBECTL:-.venv/bin/kubectl}
port=${K8S_LIVE_PORT:-18080}
url=http://127.0.0.1:$port
export CONTAINERS_CONF=$PWD/$live/containers.conf
stand_in=localhost/plumbline-live
base_image=$stand_in/debian:bookworm
python_image=$stand_in/python:3.11-slim
# The project's image as the overlay names it, and as this run builds it: under a name of
# its own, so that it shadows no plumbline:dev of the machine's, and is removed at the end.
app_image=plumbline:dev
app_build=$stand_in/plumbline:dev
# What the overlay names -> the stand-in that runs instead.
declare -A stand_ins=(
  [postgres:16]=$stand_in/postgres:16
  [nats:2.10]=$stand_in/nats:2.10
  [otel/opentelemetry-collector:0.120.0]=$stand_in/otel-collector:0.120.0
)
packages=(podman netavark aardvark-dns conmon runc catatonit golang-github-containers-common
  iptables mmdebstrap curl)

log() { printf '[k8s-live %3ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "k8s-live: $*" >&2; exit 1; }

# `$@`, its output kept in $work/NAME.log and shown only when it fails.
quietly() {
  local name=$1
  shift
  if ! "$@" > "$work/$name.log" 2>&1; then
    tail -n 40 "$work/$name.log" >&2
    fail "$name failed: $*"
  fi
}

# What the pods of this run said, when something went wrong (before they are removed).
diagnose() {
  [ -f "$work/play/started" ] || return 0
  local pod name
  for pod in $(awk '$1 == "pod" {print $2}' "$work/play/started"); do
    for name in $(podman ps -a --filter "pod=$pod" --format '{{.Names}}' 2>/dev/null); do
      case $name in *-infra) continue ;; esac
      echo "---- $name: $(podman ps -a --filter "name=^$name\$" --format '{{.Status}}')" >&2
      podman logs --tail 20 "$name" 2>&1 | sed 's/^/    /' >&2 || true
    done
  done
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  [ "$status" = 0 ] || diagnose
  if [ -n "${work:-}" ]; then
    log "tearing down what this run started"
    if ! $live/down.sh "$work/play"; then
      echo "k8s-live: the teardown failed; what it could not remove is in $work/play/started" >&2
      status=1
      work=
    fi
  fi
  if [ -n "${built:-}" ] && podman image exists "$app_build" \
      && ! podman rmi "$app_build" >/dev/null; then
    echo "k8s-live: could not remove the image $app_build" >&2
    status=1
  fi
  [ -z "${work:-}" ] || rm -rf "$work"
  log "finished in ${SECONDS}s (status $status)"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# One run at a time on a machine: the names (network, pods, volumes) are fixed.
exec 9> "${TMPDIR:-/tmp}/plumbline-k8s-live.lock"
flock --wait 600 9 || fail "another make k8s-live held the lock for 10 minutes"
work=$(mktemp -d "${TMPDIR:-/tmp}/plumbline-k8s-live.XXXXXX")

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null | grep -qx installed \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "needs these Debian packages, and root to install them: ${missing[*]}"
  log "installing ${missing[*]}"
  quietly apt-update apt-get update -q
  quietly apt-install env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
[ "$(id -u)" = 0 ] || fail "podman kube play with published ports and named networks needs root here"
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  fail "127.0.0.1:$port is taken; publish the gateway elsewhere: K8S_LIVE_PORT=PORT make k8s-live"
fi

if [ "${K8S_LIVE_FRESH:-}" = 1 ]; then
  log "K8S_LIVE_FRESH=1: removing the images of earlier runs"
  for image in "${stand_ins[@]}" "$python_image" "$base_image"; do # children first
    if podman image exists "$image"; then quietly rmi podman rmi "$image"; fi
  done
fi
if ! podman image exists "$base_image"; then
  log "base image $base_image (mmdebstrap)"
  quietly base-image $live/base_image.sh "$base_image"
fi
build() { # NAME IMAGE CONTEXT BUILD-ARGS...
  local name=$1 image=$2 context=$3
  shift 3
  log "image $image"
  quietly "build-$name" podman build --network host --tag "$image" "$@" "$context"
}
build python "$python_image" $live/images/python --build-arg "BASE=$base_image"
build postgres "${stand_ins[postgres:16]}" $live/images/postgres --build-arg "BASE=$base_image"
build nats "${stand_ins[nats:2.10]}" $live/images/nats --build-arg "BASE=$base_image"
build collector "${stand_ins[otel/opentelemetry-collector:0.120.0]}" $live/images/collector \
  --build-arg "BASE=$python_image"
# One left by a run that was killed: this check's own name, so replaced.
if podman image exists "$app_build"; then quietly rmi-app podman rmi "$app_build"; fi
built=yes
build plumbline "$app_build" . --layers=false --build-arg "PYTHON_IMAGE=$python_image"

log "render the dev overlay and adapt it"
"$kubectl" kustomize deploy/k8s/overlays/dev > "$work/dev.yaml"
image_args=(--image "$app_image=$app_build")
for name in "${!stand_ins[@]}"; do image_args+=(--image "$name=${stand_ins[$name]}"); done
"$python" $live/podman_adapt.py "$work/dev.yaml" "$work/play" --app-image "$app_image" \
  "${image_args[@]}" --publish "gateway:http=127.0.0.1:$port"

log "up"
$live/up.sh "$work/play" "$url"

log "smoke test through $url"
"$python" $live/smoke.py "$work/dev.yaml" "$url" --collector otel-collector-pod-0-otel-collector

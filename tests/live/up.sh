#!/usr/bin/env bash
# Bring up what podman_adapt.py wrote to PLAY under `podman kube play`, and wait for the
# published gateway to be ready:  up.sh PLAY URL
# Every name it creates goes to PLAY/started first, so that down.sh removes what this
# started, and only that, even when a step fails half-way. It refuses to start when one of
# those names exists already (someone else's, or left by a run that was killed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
play=$1
url=$2
network=${K8S_LIVE_NETWORK:-plumbline-dev}
ready_seconds=${K8S_LIVE_READY_SECONDS:-120}
started=$play/started

log() { printf '[up %5ss] %s\n' "$SECONDS" "$*"; }
note() { printf '%s %s\n' "$1" "$2" >> "$started"; }
secrets=()
for file in "$play"/secrets/*.json; do secrets+=("$(basename "$file" .json)"); done
mapfile -t volumes < "$play/volumes"
mapfile -t pods < <(cut -f3 "$play/workloads.tsv")

# What exists already, as the command that would remove it.
taken=()
for p in "${pods[@]}"; do podman pod exists "$p" && taken+=("podman pod rm -f $p"); done
for v in "${volumes[@]}"; do podman volume exists "$v" && taken+=("podman volume rm -f $v"); done
for s in "${secrets[@]}"; do
  podman secret inspect "$s" >/dev/null 2>&1 && taken+=("podman secret rm $s")
done
podman network exists "$network" && taken+=("podman network rm -f $network")
if [ ${#taken[@]} -gt 0 ]; then
  echo "up: names this check uses exist already; it neither reuses nor removes them." >&2
  echo "up: if a run of this check was killed and left them, remove them with:" >&2
  printf '  %s\n' "${taken[@]}" >&2
  exit 1
fi

note network "$network"
podman network create "$network" >/dev/null
for s in "${secrets[@]}"; do
  note secret "$s"
  podman secret create "$s" "$play/secrets/$s.json" >/dev/null
done
for v in "${volumes[@]}"; do note volume "$v"; done
for p in "${pods[@]}"; do note pod "$p"; done
log "network $network, ${#secrets[@]} secrets"
podman kube play --network "$network" "$play/00-shared.yaml" > "$play/00-shared.log"
log "claims: $(grep -c '^kind: PersistentVolumeClaim' "$play/00-shared.yaml")"

# One workload: its pod on the network, under every Service name that selects it.
play_workload() {
  local name=$1 aliases=$2 spec=$network
  [ -z "$aliases" ] || spec="$network:alias=${aliases//,/,alias=}"
  if ! podman kube play --network "$spec" "$play/$name.yaml" > "$play/$name.log" 2>&1; then
    echo "up: podman kube play $name failed:" >&2
    cat "$play/$name.log" >&2
    return 1
  fi
  log "$name up${aliases:+ as $aliases}"
}

# Until `$@` succeeds, or the deadline passes.
wait_for() {
  local what=$1 deadline=$((SECONDS + ready_seconds))
  shift
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "up: $what: not within ${ready_seconds} s" >&2
      return 1
    fi
    sleep 0.5
  done
  log "$what"
}

# Tier 0 (PostgreSQL, NATS, the collector), then the services, then the published gateway.
# The services start together, as a cluster would start them (their migrations included).
# Tier 0 starts one by one: its first pod builds podman's pause image, which pods started
# at the same time would each build again.
for tier in 0 1 2; do
  plays=()
  while IFS=$'\t' read -r name t _pod aliases; do
    if [ "$t" = "$tier" ]; then
      if [ "$tier" = 1 ]; then
        play_workload "$name" "$aliases" &
        plays+=($!)
      else
        play_workload "$name" "$aliases"
      fi
    fi
  done < "$play/workloads.tsv"
  failed=0
  for pid in "${plays[@]}"; do wait "$pid" || failed=1; done
  [ "$failed" = 0 ] || exit 1
  if [ "$tier" = 0 ]; then
    # The services' migrate init containers need PostgreSQL, and the services the bus.
    wait_for "postgres accepts connections" \
      podman exec postgres-pod-0-postgres pg_isready -q -h 127.0.0.1 -U postgres
    wait_for "nats is ready" bash -c 'podman logs nats-pod-0-nats 2>&1 | grep -q "Server is ready"'
  fi
done
wait_for "gateway ready at $url" curl -fsS -o /dev/null "$url/readyz"

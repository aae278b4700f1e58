#!/usr/bin/env bash
# Remove what up.sh started, as PLAY/started lists it:  down.sh PLAY
# Pods first, then volumes, secrets and the network. It goes on past a failure
# and says so in its exit status.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
started=$1/started
[ -f "$started" ] || exit 0
status=0
of() { awk -v kind="$1" '$1 == kind {print $2}' "$started"; }

# All pods at once (podman removes the pods of one command one after the other), killed
# without the grace period: nothing they hold is kept.
removals=()
for pod in $(of pod); do
  podman pod rm --force --ignore --time 0 "$pod" >/dev/null &
  removals+=($!)
done
for removal in "${removals[@]}"; do wait "$removal" || status=1; done
for volume in $(of volume); do
  if podman volume exists "$volume"; then podman volume rm --force "$volume" >/dev/null || status=1; fi
done
for secret in $(of secret); do
  if podman secret inspect "$secret" >/dev/null 2>&1; then
    podman secret rm "$secret" >/dev/null || status=1
  fi
done
for network in $(of network); do
  if podman network exists "$network"; then podman network rm --force "$network" >/dev/null || status=1; fi
  # netavark (1.4) leaves the network's port-forwarding chain behind, empty: remove it (-X
  # refuses a chain that still has rules or is still jumped to).
  chain=NETAVARK-DN-$(printf %s "$network" | sha512sum | cut -c1-13 | tr a-f A-F)
  iptables -t nat -X "$chain" 2>/dev/null || true
done
[ "$status" = 0 ] && rm -f "$started"
exit "$status"

#!/usr/bin/env bash
# The base of every image of the live check, made without a container registry: Debian
# bookworm (minbase) from the Debian mirrors by mmdebstrap, imported into podman as IMAGE.
#   base_image.sh IMAGE
# Where HTTPS leaves this machine through a proxy with its own certificate authority, the
# host's extra CAs (/usr/local/share/ca-certificates) go into the image too, so that apt and
# pip in the builds trust what the host trusts. Without such files that step does nothing.
set -euo pipefail
image=$1
mirror=${K8S_LIVE_DEBIAN_MIRROR:-http://deb.debian.org}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/plumbline-k8s-base.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
tar=$scratch/bookworm.tar
# The hooks are run by mmdebstrap, which gives them the root directory as $1.
# shellcheck disable=SC2016
mmdebstrap --quiet --variant=minbase --include=ca-certificates \
  --customize-hook='cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/" 2>/dev/null || true' \
  --customize-hook='chroot "$1" update-ca-certificates >/dev/null 2>&1' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm "$tar" \
  "deb $mirror/debian bookworm main" \
  "deb $mirror/debian bookworm-updates main" \
  "deb $mirror/debian-security bookworm-security main"
podman import --quiet \
  --change 'CMD ["bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$tar" "$image" >/dev/null

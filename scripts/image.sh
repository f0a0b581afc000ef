#!/usr/bin/env bash
# A minimal, non-root OCI image of `toolgate` (for `toolgate serve` and
# `toolgate gateway`), built without a container daemon: umoci (Debian's
# package) writes an OCI image layout from a root filesystem of just the
# binary, the shared libraries it links, CA certificates and a passwd entry
# for the unprivileged user 65532; skopeo (Debian's package) pushes it to a
# registry, pulls it back, and the digests are compared; the pulled image's
# root filesystem then runs `toolgate --version` as that user (chroot).
#
#   scripts/image.sh BINARY [REGISTRY]
# BINARY: the toolgate binary to pack (target/release/toolgate for a release).
# REGISTRY: host:port of a plain-HTTP registry to push to; without it a
# CNCF distribution registry (Debian's docker-registry) is started on
# 127.0.0.1 for the push and the pull, as the OCI tests do.
# Needs root (chroot, and unpacking files owned by other users), umoci,
# skopeo, docker-registry; writes target/image/ (OUT to override).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
fail() { echo "image: $*" >&2; exit 1; }
bin="${1:?usage: scripts/image.sh BINARY [REGISTRY]}"
registry="${2:-}"
out="${OUT:-$root/target/image}"
for t in umoci skopeo ldd chroot; do
  command -v "$t" >/dev/null || fail "no $t (apt-get install umoci skopeo)"
done
[ "$(id -u)" = 0 ] || fail "run as root (chroot, file owners in the layer)"
[ -x "$bin" ] || fail "$bin is not an executable"
version="$("$bin" --version | sed -n 's/^toolgate \([^ ]*\).*/\1/p')"
[ -n "$version" ] || fail "$bin --version does not say a toolgate version"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct)}"
created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"

rm -rf "$out"
mkdir -p "$out"
layout="$out/layout"
umoci init --layout "$layout"
umoci new --image "$layout:toolgate"
umoci unpack --image "$layout:toolgate" "$out/bundle" >/dev/null
rootfs="$out/bundle/rootfs"

# The root filesystem: the binary, its dynamic loader and libraries (as
# ldd resolves them here), CA roots for HTTPS upstreams, the user, /tmp.
install -D -m 0755 "$bin" "$rootfs/usr/bin/toolgate"
ldd "$bin" | awk '/=> \// { print $3 } /^[ \t]*\/[^ ]*ld-linux/ { print $1 }' | sort -u | while read -r lib; do
  real="$(readlink -f "$lib")"
  install -D -m 0755 "$real" "$rootfs$lib"
done
grep -q ld-linux <(find "$rootfs" -name 'ld-linux*') || fail "no dynamic loader found for $bin (ldd said: $(ldd "$bin" | tr '\n' ' '))"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
fi
mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/home/toolgate"
chmod 1777 "$rootfs/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\ntoolgate:x:65532:65532:toolgate:/home/toolgate:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\ntoolgate:x:65532:\n' >"$rootfs/etc/group"
chown 65532:65532 "$rootfs/home/toolgate"
find "$rootfs" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

umoci repack --image "$layout:toolgate" --history.created "$created" --history.created_by "scripts/image.sh" "$out/bundle"
umoci config --image "$layout:toolgate" --created "$created" --author toolgate \
  --os linux --architecture amd64 \
  --config.user 65532:65532 --config.workingdir /home/toolgate \
  --config.entrypoint /usr/bin/toolgate --config.cmd --help \
  --config.label "org.opencontainers.image.title=toolgate" \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label "org.opencontainers.image.source=https://github.com/toolgate/toolgate" \
  --history.created "$created" --history.created_by "scripts/image.sh: config"
umoci gc --layout "$layout"
digest="$(skopeo inspect --format '{{.Digest}}' "oci:$layout:toolgate")"
echo "image: toolgate $version, $digest, $(du -sk "$layout/blobs" | cut -f1) KiB of blobs"

# Push to a registry, pull back, compare.
reg_pid=""
cleanup() { [ -z "$reg_pid" ] || { kill "$reg_pid" 2>/dev/null; wait "$reg_pid" 2>/dev/null; } || true; }
trap cleanup EXIT
if [ -z "$registry" ]; then
  command -v docker-registry >/dev/null || fail "no docker-registry (apt-get install docker-registry)"
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  registry="127.0.0.1:$port"
  mkdir -p "$out/registry"
  printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' "$out/registry/storage" "$registry" >"$out/registry/config.yml"
  docker-registry serve "$out/registry/config.yml" >"$out/registry/log" 2>&1 &
  reg_pid=$!
  for _ in $(seq 150); do
    curl -fsS "http://$registry/v2/" >/dev/null 2>&1 && break
    kill -0 "$reg_pid" 2>/dev/null || fail "docker-registry exited at start: $(cat "$out/registry/log")"
    sleep 0.1
  done
  curl -fsS "http://$registry/v2/" >/dev/null || fail "docker-registry did not answer on $registry"
fi
ref="$registry/toolgate:$version"
skopeo copy --quiet --dest-tls-verify=false "oci:$layout:toolgate" "docker://$ref"
pushed="$(skopeo inspect --tls-verify=false --format '{{.Digest}}' "docker://$ref")"
[ "$pushed" = "$digest" ] || fail "the registry has $pushed for $ref, the layout $digest"
skopeo copy --quiet --src-tls-verify=false "docker://$registry/toolgate@$digest" "oci:$out/pulled:toolgate"
pulled="$(skopeo inspect --format '{{.Digest}}' "oci:$out/pulled:toolgate")"
[ "$pulled" = "$digest" ] || fail "pulled $pulled, pushed $digest"
umoci unpack --image "$out/pulled:toolgate" "$out/pulled-bundle" >/dev/null
cfg="$(skopeo inspect --config "oci:$out/pulled:toolgate")"
python3 - "$cfg" <<'PY'
import json, sys
c = json.loads(sys.argv[1])["config"]
assert c["User"] == "65532:65532", c
assert c["Entrypoint"] == ["/usr/bin/toolgate"], c
PY
ran="$(chroot --userspec=65532:65532 "$out/pulled-bundle/rootfs" /usr/bin/toolgate --version)"
[ "$ran" = "$("$bin" --version)" ] || fail "the pulled image's toolgate says '$ran'"
echo "image: pushed $ref, pulled $pulled back; as user 65532 it runs: $ran"

#!/usr/bin/env bash
# The release artifacts of one commit (docs/install.md#release-artifacts):
#   toolgate_cli-VERSION-py3-none-PLATFORM.whl   the `toolgate` command (maturin, bindings = "bin")
#   toolgate-VERSION-cp39-abi3-PLATFORM.whl      the Python library (bindings/python)
#   libtoolgate-VERSION-TRIPLE.tar.gz            lib/libtoolgate.{so,a}, include/toolgate.h
#   toolgate-VERSION.tar.gz                      the source (git archive of the commit)
#   SHA256SUMS
# into OUT (default dist/), built from the committed tree only: the script
# refuses a dirty work tree. Aimed at the same bytes from two runs of one
# commit (see docs/install.md for what is and is not reproducible):
# SOURCE_DATE_EPOCH is the commit time, paths are remapped out of the
# binaries, tar entries are sorted with fixed mtimes and owners, gzip stores
# no name or time.
#
#   scripts/release.sh [--only PARTS] [OUT]
# PARTS: a comma-separated subset of cli,python,lib,source (default: all
# four), e.g. `--only lib` for the PHP package's library alone.
# Environment: MATURIN (default: maturin on PATH), CARGO_TARGET_DIR
# (default: target/release-artifacts, kept apart from development builds
# because RUSTFLAGS differ).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
parts=cli,python,lib,source
if [ "${1:-}" = --only ]; then
  parts="${2:?--only needs a list of parts}"
  shift 2
fi
out="${1:-dist}"
part() { [[ ",$parts," == *",$1,"* ]]; }
for p in ${parts//,/ }; do
  case "$p" in cli | python | lib | source) ;; *) echo "release: unknown part '$p' (cli, python, lib, source)" >&2; exit 1 ;; esac
done
maturin="${MATURIN:-maturin}"

fail() { echo "release: $*" >&2; exit 1; }
command -v cargo >/dev/null || fail "no cargo"
if part cli || part python; then
  command -v "$maturin" >/dev/null || fail "no maturin (pip install maturin==1.16.0, or set MATURIN)"
fi
[ -z "$(git status --porcelain --untracked-files=no)" ] || fail "the work tree has uncommitted changes; release a commit"

commit="$(git rev-parse HEAD)"
version="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "toolgate"))')"
triple="$(rustc -vV | sed -n 's/^host: //p')"
export SOURCE_DATE_EPOCH="$(git log -1 --format=%ct "$commit")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/release-artifacts}"
mkdir -p "$CARGO_TARGET_DIR"
target="$(cd "$CARGO_TARGET_DIR" && pwd)"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rustup_home="${RUSTUP_HOME:-$HOME/.rustup}"
# Paths that would otherwise end up in panic messages and debug info: the
# checkout, the target directory (build scripts' OUT_DIR), the registry's
# sources and the toolchain's.
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$root=/toolgate --remap-path-prefix=$target=/target --remap-path-prefix=$cargo_home=/cargo --remap-path-prefix=$rustup_home=/rustup"
export CARGO_INCREMENTAL=0
# One codegen unit per crate's profile as committed; no host-specific CPU flags.
unset CARGO_BUILD_RUSTFLAGS

rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
echo "release: toolgate $version at $commit ($triple), SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH, into $out"

# 1. The CLI wheel (stripped: the wheel is for running, not debugging).
part cli && "$maturin" build --quiet --release --strip --locked -m cli/Cargo.toml -o "$out"
# 2. The Python library wheel (its own workspace and Cargo.lock).
part python && "$maturin" build --quiet --release --strip --locked -m bindings/python/Cargo.toml -o "$out"

# 3. libtoolgate with its header, laid out as an install prefix (lib/,
#    include/): what bindings/php and C hosts look for.
if part lib; then
  cargo build --quiet --release --locked -p toolgate-c
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' EXIT
  name="libtoolgate-$version-$triple"
  mkdir -p "$stage/$name/lib" "$stage/$name/include"
  cp "$target/release/libtoolgate.so" "$target/release/libtoolgate.a" "$stage/$name/lib/"
  cp bindings/c/include/toolgate.h "$stage/$name/include/"
  printf 'libtoolgate %s (%s), commit %s\n' "$version" "$triple" "$commit" >"$stage/$name/VERSION"
  chmod -R u=rwX,go=rX "$stage/$name"
  tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --format=posix -C "$stage" -cf - "$name" | gzip -9n >"$out/$name.tar.gz"
fi

# 4. The source archive: git archive stamps every entry with the commit time.
part source && git archive --format=tar --prefix="toolgate-$version/" "$commit" | gzip -9n >"$out/toolgate-$version.tar.gz"

(cd "$out" && shopt -s nullglob && files=(*.whl *.tar.gz) && [ "${#files[@]}" -gt 0 ] && LC_ALL=C sha256sum -- "${files[@]}" | LC_ALL=C sort -k2 >SHA256SUMS)
cat "$out/SHA256SUMS"

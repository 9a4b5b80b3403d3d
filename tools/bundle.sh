#!/usr/bin/env bash
# Gathers everything `make setup` fetches into one folder, for `make setup OFFLINE=DIR` on machines with no
# network (a classroom, a lab behind a firewall): docs/install-offline.md.
#
#   tools/bundle.sh DIR      (make bundle BUNDLE=DIR; default mmrig-bundle/)
#
# Run it on a Debian 12 machine of the same architecture as the targets, with network; root is not needed
# (apt-get update is run only when root). What is on this machine does not matter: the bundle holds the whole
# dependency closure of the Debian packages, as a bare Debian 12 needs it.
#   DIR/debs/     the .deb files of tools/setup.sh's packages and everything they depend on, and a Packages
#                 index, so that apt uses DIR/debs as a flat `file:` repository (dependencies resolved by apt)
#   DIR/wheels/   a wheel for every Python distribution of mmrig[dev], plus pip, setuptools and wheel
#                 (sdist-only ones are built into wheels here); for this machine's python3 (cp311)
#   DIR/crates/   freertos-next-0.12.0.crate, the FreeRTOS kernel (through cargo, as tools/fetch_freertos.sh)
#   DIR/MANIFEST  every file with kind, name, version and sha256; setup checks it before using anything
# A DIR that exists is replaced only if it is an earlier bundle (it has a MANIFEST).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[[ $# -eq 1 && -n $1 ]] || { echo "usage: tools/bundle.sh DIR" >&2; exit 2; }
dest="$(realpath -m -- "$1")"
fail() { echo "bundle: $*" >&2; exit 1; }
[[ $dest != *[[:space:]]* ]] || fail "'$dest': a path without spaces, please (apt's sources.list cannot quote them)"
if [[ -e $dest && ! -f $dest/MANIFEST ]] && [[ -n "$(ls -A "$dest" 2>/dev/null)" ]]; then
    fail "$dest exists and is not a bundle (no MANIFEST): give a new or empty directory"
fi
. /etc/os-release
[[ ${ID:-} == debian && ${VERSION_ID:-} == 12 ]] || fail "make the bundle on Debian 12 (this is ${PRETTY_NAME:-unknown})"
arch="$(dpkg --print-architecture)"
py=/usr/bin/python3
[[ -x $py ]] || fail "$py not found (apt-get install python3 python3-venv)"
command -v cargo >/dev/null || fail "cargo not found: it fetches the FreeRTOS crate (apt-get install cargo, or rustup)"

mkdir -p "$(dirname "$dest")"
work="$(mktemp -d "$(dirname "$dest")/.mmrig-bundle.XXXXXX")"
trap 'rm -rf "$work"' EXIT
new="$work/bundle"
mkdir -p "$new/debs" "$new/wheels" "$new/crates"

# --- Debian packages: the recursive Depends/PreDepends closure, every alternative and provider included
# (apt chooses among them when it installs), native architecture only; the candidate versions of this machine.
mapfile -t wanted < <("$root/tools/setup.sh" --print-apt-packages --system --offline "$dest")   # what an install from it needs (the system step's too)
echo "bundle: resolving the dependencies of ${#wanted[@]} Debian packages"
[[ $(id -u) -ne 0 ]] || apt-get update -qq
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
                           --no-replaces --no-enhances "${wanted[@]}" | grep -v '^ ' | grep -v '[<:]' | sort -u)
echo "bundle: downloading ${#closure[@]} .deb files"
# apt-get download writes into the current directory; as root its sandbox user cannot, hence Sandbox::User
(cd "$new/debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "${closure[@]}" >/dev/null)
# names without the epoch's "%3a" (apt would read it as an escaped ':' in a file: URI), and the Packages index
for deb in "$new/debs"/*.deb; do
    name="$(basename "$deb")"
    [[ $name != *%3a* ]] || mv "$deb" "$new/debs/${name%%_*}_${name#*%3a}"
done
for deb in "$new/debs"/*.deb; do
    dpkg-deb -f "$deb"
    printf 'Filename: ./%s\nSize: %s\nSHA256: %s\n\n' "$(basename "$deb")" "$(stat -c %s "$deb")" \
        "$(sha256sum "$deb" | cut -d' ' -f1)"
done > "$new/debs/Packages"

# --- Python: the wheels of mmrig[dev] for this python3, pip itself, and what the editable build needs
echo "bundle: downloading the Python wheels"
"$py" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -q --upgrade pip
(cd "$root" && "${pip[@]}" download -q -d "$new/wheels" '.[dev]' pip setuptools wheel)
rm -f "$new/wheels"/mmrig-*
for sdist in "$new/wheels"/*.tar.gz "$new/wheels"/*.zip; do
    [[ -e $sdist ]] || continue
    echo "bundle: building a wheel of $(basename "$sdist")"
    "${pip[@]}" wheel -q --no-deps -w "$new/wheels" "$sdist"
    rm -f "$sdist"
done

# --- FreeRTOS: the crate file that cargo fetches into its cache, checked against the checksum in Cargo.lock
echo "bundle: fetching the FreeRTOS crate"
mkdir -p "$work/stub"
printf '[package]\nname = "mmrig-bundle-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n[lib]\npath = "lib.rs"\n[dependencies]\nfreertos-next = "=0.12.0"\n' \
    > "$work/stub/Cargo.toml"
: > "$work/stub/lib.rs"
(cd "$work/stub" && cargo fetch --quiet)
crate_src="$(cd "$work/stub" && cargo metadata --format-version 1 --quiet | "$py" -c '
import json, sys, pathlib
hits = [p for p in json.load(sys.stdin)["packages"] if p["name"] == "freertos-next" and p["version"] == "0.12.0"]
print(pathlib.Path(hits[0]["manifest_path"]).parent if hits else "")')"
[[ -n $crate_src ]] || fail "freertos-next 0.12.0 not in cargo metadata"
# .../registry/src/<registry>/freertos-next-0.12.0 -> .../registry/cache/<registry>/freertos-next-0.12.0.crate
crate="$(dirname "$(dirname "$(dirname "$crate_src")")")/cache/$(basename "$(dirname "$crate_src")")/freertos-next-0.12.0.crate"
[[ -f $crate ]] || fail "the crate file is not in cargo's cache ($crate)"
locked="$(awk '/^name = "freertos-next"/{f=1} f && /^checksum/{gsub(/"/, "", $3); print $3; exit}' "$work/stub/Cargo.lock")"
[[ "$(sha256sum "$crate" | cut -d' ' -f1)" == "$locked" ]] || fail "$crate does not match its checksum in Cargo.lock"
cp "$crate" "$new/crates/"

# --- the manifest: what, which version, sha256, where
{
    echo "# mmrig offline bundle, made $(date -u +%Y-%m-%dT%H:%MZ) by tools/bundle.sh from mmrig $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
    echo "# install: make setup OFFLINE=<this directory> (docs/install-offline.md)"
    echo "# system: debian-12 $arch"
    echo "# python: $("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
    echo "# pyproject: $(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
    echo "# kind	name	version	sha256	file"
    for deb in "$new/debs"/*.deb; do
        printf 'deb\t%s\t%s\t%s\tdebs/%s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" \
            "$(sha256sum "$deb" | cut -d' ' -f1)" "$(basename "$deb")"
    done
    printf 'index\tPackages\t-\t%s\tdebs/Packages\n' "$(sha256sum "$new/debs/Packages" | cut -d' ' -f1)"
    for whl in "$new/wheels"/*.whl; do
        IFS=- read -r wname wversion _ <<< "$(basename "$whl")"
        printf 'wheel\t%s\t%s\t%s\twheels/%s\n' "$wname" "$wversion" "$(sha256sum "$whl" | cut -d' ' -f1)" "$(basename "$whl")"
    done
    printf 'crate\tfreertos-next\t0.12.0\t%s\tcrates/freertos-next-0.12.0.crate\n' "$locked"
} > "$new/MANIFEST"

rm -rf "$dest"
mv "$new" "$dest"
echo "bundle: $dest: $(ls "$dest/debs" | grep -c '\.deb$') Debian packages, $(ls "$dest/wheels" | wc -l) wheels," \
     "the FreeRTOS crate; $(du -sh "$dest" | cut -f1)"

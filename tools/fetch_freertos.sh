#!/usr/bin/env bash
# Fetches FreeRTOS-Kernel V11.2.0 through cargo, as BRIEF.md prescribes: the crate `freertos-next`
# (=0.12.0) vendors the official kernel. We never commit kernel sources and never name a registry
# host: cargo knows where its registry is, and `cargo metadata` tells us where it unpacked the crate.
#
# `--offline DIR`: no cargo and no network; the crate file comes from a bundle made by `make bundle`
# (DIR/crates/), is checked against the sha256 below (the checksum the registry publishes for this version,
# which cargo records in Cargo.lock) and unpacked into build/freertos/crate.
#
# Output: build/freertos/kernel -> symlink to the crate's FreeRTOS-Kernel directory. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/freertos"
link="$out/kernel"
crate_sha256=b7824fb42660c16e1b3b573eef99c2fe5c5cba6294a631c309084635f6bfcbb0   # freertos-next 0.12.0
bundle=""
if [[ ${1:-} == --offline ]]; then
    [[ -n ${2:-} ]] || { echo "fetch_freertos: --offline needs a directory" >&2; exit 2; }
    bundle="$(realpath -m -- "$2")"
fi
if [[ -e "$link/tasks.c" && -e "$link/portable/ThirdParty/GCC/ATmega/port.c" ]]; then
    exit 0
fi
check_kernel() {   # $1: the crate's directory; checks the kernel in it and links build/freertos/kernel to it
    local kernel="$1/FreeRTOS-Kernel" f version
    for f in tasks.c queue.c list.c include/FreeRTOS.h portable/ThirdParty/GCC/ATmega/port.c; do
        [[ -e "$kernel/$f" ]] || { echo "fetch_freertos: $kernel/$f missing from the crate" >&2; exit 1; }
    done
    version="$(sed -n 's/.*tskKERNEL_VERSION_NUMBER *"\([^"]*\)".*/\1/p' "$kernel/include/task.h")"
    [[ "$version" == "V11.2.0" ]] || { echo "fetch_freertos: expected kernel V11.2.0, crate has '$version'" >&2; exit 1; }
    ln -sfn "$kernel" "$link"
    echo "FreeRTOS-Kernel $version ready at build/freertos/kernel"
}
if [[ -n $bundle ]]; then
    crate="$bundle/crates/freertos-next-0.12.0.crate"
    [[ -f $crate ]] || { echo "fetch_freertos: offline bundle $bundle lacks crates/freertos-next-0.12.0.crate" >&2; exit 2; }
    [[ "$(sha256sum "$crate" | cut -d' ' -f1)" == "$crate_sha256" ]] \
        || { echo "fetch_freertos: $crate does not have the sha256 of freertos-next 0.12.0" >&2; exit 2; }
    rm -rf "$out/crate"
    mkdir -p "$out/crate"
    tar -xzf "$crate" -C "$out/crate"
    check_kernel "$out/crate/freertos-next-0.12.0"
    exit 0
fi
command -v cargo >/dev/null || { echo "fetch_freertos: cargo not found (make setup installs it)" >&2; exit 1; }
mkdir -p "$out/stub"
cat > "$out/stub/Cargo.toml" <<'TOML'
[package]
name = "mmrig-freertos-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "lib.rs"

[dependencies]
freertos-next = "=0.12.0"
TOML
: > "$out/stub/lib.rs"
(cd "$out/stub" && cargo fetch --quiet)
crate_dir="$(cd "$out/stub" && cargo metadata --format-version 1 --quiet | python3 -c '
import json, sys, pathlib
meta = json.load(sys.stdin)
hits = [p for p in meta["packages"] if p["name"] == "freertos-next" and p["version"] == "0.12.0"]
if not hits:
    sys.exit("freertos-next 0.12.0 not in cargo metadata")
print(pathlib.Path(hits[0]["manifest_path"]).parent)
')"
check_kernel "$crate_dir"

#!/usr/bin/env bash
# Fetches FreeRTOS-Kernel V11.2.0 through cargo, as BRIEF.md prescribes: the crate `freertos-next`
# (=0.12.0) vendors the official kernel. We never commit kernel sources and never name a registry
# host: cargo knows where its registry is, and `cargo metadata` tells us where it unpacked the crate.
#
# Output: build/freertos/kernel -> symlink to the crate's FreeRTOS-Kernel directory. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/freertos"
link="$out/kernel"
if [[ -e "$link/tasks.c" && -e "$link/portable/ThirdParty/GCC/ATmega/port.c" ]]; then
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
kernel="$crate_dir/FreeRTOS-Kernel"
for f in tasks.c queue.c list.c include/FreeRTOS.h portable/ThirdParty/GCC/ATmega/port.c; do
    [[ -e "$kernel/$f" ]] || { echo "fetch_freertos: $kernel/$f missing from the crate" >&2; exit 1; }
done
version="$(sed -n 's/.*tskKERNEL_VERSION_NUMBER *"\([^"]*\)".*/\1/p' "$kernel/include/task.h")"
[[ "$version" == "V11.2.0" ]] || { echo "fetch_freertos: expected kernel V11.2.0, crate has '$version'" >&2; exit 1; }
ln -sfn "$kernel" "$link"
echo "FreeRTOS-Kernel $version ready at build/freertos/kernel"

#!/usr/bin/env bash
# Fetches FreeRTOS-Kernel V11.2.0 through cargo, as BRIEF.md prescribes: the crate `freertos-next`
# (=0.12.0) vendors the official kernel. We never commit kernel sources and never name a registry
# host: cargo knows where its registry is, and `cargo metadata` tells us where it put the crate.
#
#   tools/fetch_freertos.sh                  links build/freertos/kernel to the machine's shared kernel if root
#                                            installed one (below), else fetches the crate with cargo
#   tools/fetch_freertos.sh --offline DIR    the same, but without the shared kernel the crate file comes from a
#                                            bundle made by `make bundle` (DIR/crates/) and is unpacked into
#                                            build/freertos/crate: no cargo, no network
#   tools/fetch_freertos.sh --available      exit 0 if a kernel is at hand without fetching (build/freertos/kernel
#                                            or the shared copy), 1 if not; prints nothing
#   tools/fetch_freertos.sh --system [--offline DIR]
#                                            (root, from `tools/setup.sh --system`) installs the kernel once for
#                                            every user of the machine, readable by all, in
#                                            $MMRIG_FREERTOS_SYSTEM (default /usr/local/share/mmrig/freertos)/freertos-next-0.12.0;
#                                            the crate file from the bundle, or from cargo's cache after a `cargo
#                                            fetch` with root's cargo (or Debian's /usr/bin/cargo when that fails)
#
# A crate file (from a bundle or cargo's cache) is checked against the sha256 below (the checksum the registry
# publishes for this version, which cargo records in Cargo.lock) before it is unpacked.
# Output: build/freertos/kernel -> symlink to a FreeRTOS-Kernel directory (not with --system). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/freertos"
link="$out/kernel"
crate_name=freertos-next-0.12.0
crate_sha256=b7824fb42660c16e1b3b573eef99c2fe5c5cba6294a631c309084635f6bfcbb0   # freertos-next 0.12.0
system_dir="${MMRIG_FREERTOS_SYSTEM:-/usr/local/share/mmrig/freertos}"
system_kernel="$system_dir/$crate_name/FreeRTOS-Kernel"
bundle="" system="" available=""
while (($#)); do
    case "$1" in
        --offline) [[ -n ${2:-} ]] || { echo "fetch_freertos: --offline needs a directory" >&2; exit 2; }
                   bundle="$(realpath -m -- "$2")"; shift 2 ;;
        --system) system=1; shift ;;
        --available) available=1; shift ;;
        *) echo "fetch_freertos: unknown argument '$1' (see the head of tools/fetch_freertos.sh)" >&2; exit 2 ;;
    esac
done

kernel_version() {   # $1: a FreeRTOS-Kernel directory; prints its version if it is whole, else nothing
    local f
    for f in tasks.c queue.c list.c include/FreeRTOS.h include/task.h portable/ThirdParty/GCC/ATmega/port.c; do
        [[ -r "$1/$f" ]] || return 0
    done
    sed -n 's/.*tskKERNEL_VERSION_NUMBER *"\([^"]*\)".*/\1/p' "$1/include/task.h"
}
check_kernel() {   # $1: a FreeRTOS-Kernel directory that must hold V11.2.0
    local version
    version="$(kernel_version "$1")"
    [[ -n $version ]] || { echo "fetch_freertos: $1 lacks kernel files (tasks.c, the ATmega port, ...)" >&2; exit 1; }
    [[ "$version" == "V11.2.0" ]] || { echo "fetch_freertos: expected kernel V11.2.0, $1 has '$version'" >&2; exit 1; }
}
link_kernel() {    # $1: a checked FreeRTOS-Kernel directory
    mkdir -p "$out"
    ln -sfn "$1" "$link"
    echo "FreeRTOS-Kernel V11.2.0 ready at build/freertos/kernel${2:+ ($2)}"
}
unpack() {         # $1: the crate file, $2: the directory to hold $crate_name/ (replaced)
    [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$crate_sha256" ]] \
        || { echo "fetch_freertos: $1 does not have the sha256 of freertos-next 0.12.0" >&2; exit 2; }
    local tmp
    tmp="$(mktemp -d "$2/.unpack.XXXXXX")"
    tar -xzf "$1" -C "$tmp" --no-same-owner
    check_kernel "$tmp/$crate_name/FreeRTOS-Kernel"
    chmod -R u+rwX,go+rX,go-w "$tmp/$crate_name"    # readable by every user whatever the umask
    rm -rf "${2:?}/$crate_name"
    mv "$tmp/$crate_name" "$2/"
    rmdir "$tmp"
}
write_stub() {     # $1: a directory to hold a stub crate whose one dependency is the kernel's crate
    mkdir -p "$1"
    printf '[package]\nname = "mmrig-freertos-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[lib]\npath = "lib.rs"\n\n[dependencies]\nfreertos-next = "=0.12.0"\n' \
        > "$1/Cargo.toml"
    : > "$1/lib.rs"
}
crate_src_dir() {  # $1: a cargo, $2: a stub (write_stub); `cargo fetch`es it and prints where cargo unpacked the
                   # crate (its registry's src/), as `cargo metadata` says, or fails
    (cd "$2" && "$1" fetch --quiet >&2) || return 1
    (cd "$2" && "$1" metadata --format-version 1 --quiet) | python3 -c '
import json, sys, pathlib
hits = [p for p in json.load(sys.stdin)["packages"] if p["name"] == "freertos-next" and p["version"] == "0.12.0"]
if not hits:
    sys.exit("fetch_freertos: freertos-next 0.12.0 not in cargo metadata")
print(pathlib.Path(hits[0]["manifest_path"]).parent)'
}
cargo_fetch() {    # $1: a cargo; prints the crate file in its cache (after a `cargo fetch` of a stub), or fails
    local stub crate_src
    stub="$(mktemp -d)"
    write_stub "$stub"
    crate_src="$(crate_src_dir "$1" "$stub")" || crate_src=""
    rm -rf "$stub"
    [[ -n $crate_src ]] || return 1
    # .../registry/src/<registry>/freertos-next-0.12.0 -> .../registry/cache/<registry>/freertos-next-0.12.0.crate
    echo "$(dirname "$(dirname "$(dirname "$crate_src")")")/cache/$(basename "$(dirname "$crate_src")")/$crate_name.crate"
}
bundle_crate="$bundle/crates/$crate_name.crate"   # (--offline)
check_bundle() {   # the bundle holds the crate file, or exit 2
    [[ -f $bundle_crate ]] || { echo "fetch_freertos: offline bundle $bundle lacks crates/$crate_name.crate" >&2; exit 2; }
}

if [[ -n $available ]]; then
    if [[ -n "$(kernel_version "$link")" || "$(kernel_version "$system_kernel")" == V11.2.0 ]]; then exit 0; fi
    exit 1
fi

# --- root: the machine's shared kernel
if [[ -n $system ]]; then
    if [[ "$(kernel_version "$system_kernel")" == V11.2.0 ]]; then
        echo "setup: FreeRTOS-Kernel V11.2.0: already in $system_kernel"
        exit 0
    fi
    (umask 022; mkdir -p "$system_dir")
    if [[ -n $bundle ]]; then
        check_bundle
        unpack "$bundle_crate" "$system_dir"
        echo "setup: FreeRTOS-Kernel V11.2.0: installed from the bundle into $system_kernel"
        exit 0
    fi
    cargos=()
    c="$(command -v cargo || true)"; [[ -z $c ]] || cargos+=("$c")
    [[ ! -x /usr/bin/cargo || /usr/bin/cargo -ef "${c:-/nonexistent}" ]] || cargos+=(/usr/bin/cargo)
    ((${#cargos[@]})) || { echo "fetch_freertos: no cargo to fetch the kernel with (apt-get install cargo)" >&2; exit 1; }
    for c in "${cargos[@]}"; do
        echo "setup: fetching the FreeRTOS crate with $c ($("$c" --version 2>/dev/null || echo '?'))"
        crate="$(cargo_fetch "$c")" && [[ -f $crate ]] || { echo "setup: $c could not fetch it (above)" >&2; continue; }
        unpack "$crate" "$system_dir"
        echo "setup: FreeRTOS-Kernel V11.2.0: fetched with $c into $system_kernel"
        exit 0
    done
    echo "setup: could not fetch the FreeRTOS crate: give cargo access to its registry (its proxy settings), or" \
         "install from a bundle: tools/setup.sh --system --offline DIR (docs/install-offline.md)" >&2
    exit 1
fi

# --- everyone: build/freertos/kernel
if [[ -n "$(kernel_version "$link")" ]]; then
    exit 0
fi
if [[ "$(kernel_version "$system_kernel")" == V11.2.0 ]]; then
    link_kernel "$system_kernel" "the machine's shared copy in $system_dir"
    exit 0
fi
if [[ -n $bundle ]]; then
    check_bundle
    mkdir -p "$out/crate"
    unpack "$bundle_crate" "$out/crate"
    link_kernel "$out/crate/$crate_name/FreeRTOS-Kernel"
    exit 0
fi
command -v cargo >/dev/null || { echo "fetch_freertos: cargo not found (make setup installs it)" >&2; exit 1; }
write_stub "$out/stub"
crate_dir="$(crate_src_dir cargo "$out/stub")" || exit 1
check_kernel "$crate_dir/FreeRTOS-Kernel"
link_kernel "$crate_dir/FreeRTOS-Kernel"

#!/usr/bin/env bash
# One idempotent setup for a fresh Debian 12 machine: Debian packages, the Python environment in .venv
# (the mmrig package in editable mode with its dev extras) and the FreeRTOS kernel through cargo.
# Each step is skipped when already done, so `make test` and `make demo` can call it every time.
#
#   tools/setup.sh                   everything, from the network (apt, pip and cargo use their usual configuration)
#   tools/setup.sh --offline DIR     everything from a bundle made by `make bundle` (tools/bundle.sh): no network
#   tools/setup.sh --system [--offline DIR]
#                                    the one step that needs root, for every user of the machine: the Debian
#                                    packages (and RealtimeKit, rtkit: real-time threads for users without a
#                                    limits.conf entry) and the FreeRTOS kernel, installed once where every user reads it
#                                    (tools/fetch_freertos.sh --system); says what it did. Nothing in the checkout
#                                    is written. Afterwards everyone runs `make setup` as a normal user, with no
#                                    root and no cargo (docs/install-offline.md). Run as root; with sudo it
#                                    calls itself through sudo. --debian-only is its earlier name.
#   tools/setup.sh --print-apt-packages [--system] [--offline DIR]
#                                    the Debian packages that setup with these options wants, one a line
#                                    (installed or not; tools/bundle.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="" system_step="" print_apt=""
args=("$@")
while (($#)); do
    case "$1" in
        --offline) [[ $# -ge 2 && -n "$2" ]] || { echo "setup: --offline needs a directory" >&2; exit 2; }
                   bundle="$(realpath -m -- "$2")"; shift 2 ;;
        --system|--debian-only) system_step=1; shift ;;
        --print-apt-packages) print_apt=1; shift ;;
        *) echo "setup: unknown argument '$1' (see the head of tools/setup.sh)" >&2; exit 2 ;;
    esac
done
if [[ -n $system_step && -z $print_apt && $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null && exec sudo "$root/tools/setup.sh" "${args[@]}"
    echo "setup: --system installs for every user of the machine: run it as root (su -c '$root/tools/setup.sh --system${bundle:+ --offline $bundle}')" >&2
    exit 2
fi
cd "$root"

# Toolchains and libraries the build and the tests use; see docs/architecture.md for who needs what.
apt_packages=(
    build-essential pkg-config python3 python3-venv python3-pip
    sdcc sdcc-ucsim                      # 8051 profiler: compiler and the ucsim simulator (s51)
    bison flex dpkg-dev xz-utils         # tools/ucsim.sh builds ucsim's 8051 core from Debian's sdcc source for the bench
    gcc-avr binutils-avr avr-libc        # ATmega2560 profiler and executor
    simavr libsimavr-dev libelf-dev      # the virtual bench links libsimavr
    arduino-core-avr                     # the Mega 2560's stk500v2 bootloader for mmbench --arduino
    libcmocka-dev                        # C unit tests
    clang libclang-rt-14-dev             # libFuzzer campaigns on the C decoder
    avrdude                              # flashing real boards (make flash-*)
    stress-ng                            # heavy PC load for `mmrig run --load` (paper section 7.5)
    iproute2 util-linux                  # ip, unshare: the network load runs in a namespace of its own (loopback only)
    rt-tests                             # cyclictest: the host's own wake-up latency beside normal mode (make perf)
    xvfb xauth                           # the GUI's screenshot tests run under a virtual X server
    libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-render-util0 libxkbcommon-x11-0 libxcb-xkb1
    libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libxcb-cursor0 libegl1 libgl1   # Qt's xcb platform plugin
    libglib2.0-0 libdbus-1-3 libfontconfig1 fonts-dejavu-core   # PySide6's own libraries load these; text in screenshots
)
# cargo fetches the FreeRTOS crate. The system step always installs Debian's (online): whatever root's own PATH
# holds, it fetches the shared kernel with it if root has no cargo of its own, and it stays for users whose
# checkout would want another kernel than the shared one. Not needed from a bundle (it holds the crate), nor when
# a kernel is at hand (the clone's build/freertos/kernel or the machine's shared copy), nor with a cargo on PATH.
if [[ -z $bundle ]] && { [[ -n $system_step ]] || ! { command -v cargo >/dev/null || tools/fetch_freertos.sh --available; }; }; then
    apt_packages+=(cargo)
fi
# RealtimeKit (rtkit, with the system D-Bus and polkit it needs): real-time scheduling for users without a
# limits.conf entry, asked for by the bench and normal mode's firing thread (mmsched/host/rtkit.py). A machine's step,
# for every user: the per-user `make setup` does without it (mmrig then does as the kernel's limits allow)
if [[ -n $system_step ]]; then
    apt_packages+=(rtkit)
    # trace-cmd: `mmrig run --trace-host` records the kernel's scheduler trace (root or a writable tracefs: a
    # machine's step; docs/explain.md)
    apt_packages+=(trace-cmd)
fi
if [[ -n $print_apt ]]; then printf '%s\n' "${apt_packages[@]}"; exit 0; fi

# The bundle: its manifest lists every file with its sha256; check them all before using any (one line, exit 2).
bundle_fail() { echo "setup: offline bundle $bundle: $* (a bundle comes from 'make bundle': docs/install-offline.md)" >&2; exit 2; }
if [[ -n $bundle ]]; then
    manifest="$bundle/MANIFEST"
    [[ -d $bundle ]] || bundle_fail "no such directory"
    [[ -f $manifest ]] || bundle_fail "no MANIFEST"
    system="$(. /etc/os-release; echo "${ID:-?}-${VERSION_ID:-?}") $(dpkg --print-architecture)"
    made_for="$(sed -n 's/^# system: //p' "$manifest")"
    [[ "$made_for" == "$system" ]] || bundle_fail "made for '$made_for', this machine is '$system'"
    if command -v python3 >/dev/null; then   # else apt installs Debian 12's python3 from the bundle below
        pytag="$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
        [[ "$(sed -n 's/^# python: //p' "$manifest")" == "$pytag" ]] || bundle_fail "its wheels are not for this python3 ($pytag)"
    fi
    while IFS=$'\t' read -r kind name version sum file; do
        [[ -f "$bundle/$file" ]] || bundle_fail "lacks $file ($kind $name $version)"
    done < <(grep -v '^#' "$manifest")
    bad="$(grep -v '^#' "$manifest" | awk -F'\t' '{print $4 "  " $5}' | (cd "$bundle" && sha256sum -c --quiet 2>/dev/null) \
           | sed -n 's/: FAILED.*//p' | head -1 || true)"
    [[ -z $bad ]] || bundle_fail "$bad does not match its sha256 in MANIFEST"
    for pkg in "${apt_packages[@]}"; do
        grep -qP "^deb\t\Q$pkg\E\t" "$manifest" || bundle_fail "lacks the Debian package $pkg"
    done
    grep -qP '^crate\tfreertos-next\t0\.12\.0\t' "$manifest" || bundle_fail "lacks the crate freertos-next 0.12.0"
    if ! grep -qx "# pyproject: $(sha256sum pyproject.toml | cut -d' ' -f1)" "$manifest"; then
        echo "setup: note: the bundle was made from another pyproject.toml; pip says below if a wheel is missing" >&2
    fi
fi

missing=()
for pkg in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[[ -z $system_step ]] || echo "setup: the system step: Debian packages and the FreeRTOS kernel, for every user of this machine"
if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}"
    sudo=""
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || {
            echo "setup: need root to install ${missing[*]}: have someone with root run 'tools/setup.sh --system" \
                 "${bundle:+--offline $bundle}' once (docs/install-offline.md), then run make setup again" >&2; exit 1; }
        sudo="sudo"
    fi
    apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
    if [[ -n $bundle ]]; then
        # apt with the bundle as its only source (a flat file: repository, debs/Packages made by tools/bundle.sh),
        # its lists and cache in a scratch directory: the machine's own sources and lists are neither read nor touched
        aptdir="$(mktemp -d)"
        trap 'rm -rf "$aptdir"' EXIT
        mkdir -p "$aptdir/parts" "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
        echo "deb [trusted=yes] file:$bundle/debs ./" > "$aptdir/sources.list"
        apt+=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o "Dir::Etc::SourceParts=$aptdir/parts"
              -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache" -o APT::Sandbox::User=root)
    fi
    $sudo "${apt[@]}" update -qq
    $sudo "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ -n $system_step ]]; then
    still=()
    for pkg in "${apt_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || still+=("$pkg")
    done
    ((${#still[@]} == 0)) || { echo "setup: apt did not install ${still[*]}" >&2; exit 1; }
    echo "setup: Debian packages: all ${#apt_packages[@]} installed (${#missing[@]} by this step," \
         "$(( ${#apt_packages[@]} - ${#missing[@]} )) were there already)"
    tools/fetch_freertos.sh --system ${bundle:+--offline "$bundle"}
    echo "setup: system step done. Every user now runs 'make setup${bundle:+ OFFLINE=$bundle}' as themselves, in a clone" \
         "of their own: no root, and no cargo or crates registry (the kernel is the shared copy above)"
    exit 0
fi

stamp=.venv/.mmrig-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [[ ! -f $stamp || "$(cat $stamp)" != "$want" ]]; then
    echo "setup: creating .venv and installing mmrig[dev]"
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    pip=(.venv/bin/python -m pip install --disable-pip-version-check)
    [[ -z $bundle ]] || pip+=(--no-index --find-links "$bundle/wheels")   # only the bundle's wheels, no index
    "${pip[@]}" --quiet --upgrade pip
    # -qq: setuptools' editable build always prints an "Editable installation" notice (our packages live in
    # four folders, so it installs a meta-path finder); errors are still shown.
    "${pip[@]}" -qq -e '.[dev]' || {
        [[ -z $bundle ]] || bundle_fail "pip could not install mmrig[dev] from its wheels (above)"
        exit 1; }
    echo "$want" > $stamp
fi

tools/fetch_freertos.sh ${bundle:+--offline "$bundle"}

# The bench's 8051 core: ucsim built from Debian's sdcc source package, pinned. Without it (no deb-src
# reachable, an offline bundle: exit 3) everything else works and the 8051 bench's tests say they are skipped.
if [[ -n $bundle ]]; then
    echo "setup: offline: the bench's 8051 core (tools/ucsim.sh) needs Debian's sdcc source package; not built"
else
    rc=0; tools/ucsim.sh || rc=$?
    if [[ $rc -eq 3 ]]; then
        echo "setup: going on without the bench's 8051 core (the line above says why)"
    elif [[ $rc -ne 0 ]]; then
        exit "$rc"
    fi
fi

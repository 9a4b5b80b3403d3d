#!/usr/bin/env bash
# One idempotent setup for a fresh Debian 12 machine: Debian packages, the Python environment in .venv
# (the mmrig package in editable mode with its dev extras) and the FreeRTOS kernel through cargo.
# Each step is skipped when already done, so `make test` and `make demo` can call it every time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# Toolchains and libraries the build and the tests use; see docs/architecture.md for who needs what.
apt_packages=(
    build-essential pkg-config python3 python3-venv python3-pip
    sdcc sdcc-ucsim                      # 8051 profiler: compiler and the ucsim simulator (s51)
    gcc-avr binutils-avr avr-libc        # ATmega2560 profiler and executor
    simavr libsimavr-dev libelf-dev      # the virtual bench links libsimavr
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
command -v cargo >/dev/null || apt_packages+=(cargo)   # fetches the FreeRTOS kernel crate

missing=()
for pkg in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}"
    sudo=""
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

stamp=.venv/.mmrig-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [[ ! -f $stamp || "$(cat $stamp)" != "$want" ]]; then
    echo "setup: creating .venv and installing mmrig[dev]"
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
    # -qq: setuptools' editable build always prints an "Editable installation" notice (our packages live in
    # four folders, so it installs a meta-path finder); errors are still shown.
    .venv/bin/python -m pip install -qq -e '.[dev]'
    echo "$want" > $stamp
fi

tools/fetch_freertos.sh

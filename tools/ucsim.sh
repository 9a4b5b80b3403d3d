#!/usr/bin/env bash
# ucsim's 8051 core as a static library for the bench (hil/bench/mcs51).
#
# Fetches Debian's `sdcc` source package at one pinned version (ucsim lives in its sim/ucsim; we link
# ucsim's internal C++ API, which changes between releases, hence the pin), configures ucsim with every
# port but mcs51 disabled and builds only what the 8051 core needs:
#
#   build/ucsim/lib/libucsim51.a   ucsim's sim, cmd, gui and util libraries plus the s51 core objects
#                                  (not s51.o, the program's main), in one archive: their references
#                                  go round in circles (ucsim links them as sim ucsimutil guiucsim cmd
#                                  ucsimutil sim), and GNU ld resolves those within one archive
#   build/ucsim/cppflags           the -I flags for ucsim's headers (as its s51.src/Makefile has them)
#   build/ucsim/src/               the configured ucsim tree (its headers are the API), COPYING
#   build/ucsim/VERSION            the pinned version, written last: its presence means "built"
#
# Idempotent: a second run finds VERSION equal to the pin and does nothing (it says so).
# Licence: ucsim is GPL-2.0-or-later; a program linking this library is a combined work under the GPL.
#
# Build dependencies, installed with apt-get only when missing: bison, flex, g++, make, dpkg-dev
# (dpkg-source), xz-utils. The source package comes through apt from the same archives the machine's
# own apt sources name (their entries copied as deb-src into a temporary list), so this file names no
# host.
#
# Exit codes: 0 built or already built; 3 the source package or the build tools cannot be had (no
# network, no deb-src for these archives): one line on stderr, and setup can go on without the 8051
# core; 1 anything else (a failed build is a bug: its log is build/ucsim/build.log).
set -euo pipefail

PIN="4.2.0+dfsg-1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/build/ucsim"
LOG="$OUT/build.log"

say() { echo "ucsim.sh: $*"; }
unavailable() { echo "ucsim.sh: $* (exit 3: the bench's 8051 core is not built)" >&2; exit 3; }

if [[ -f "$OUT/VERSION" && "$(cat "$OUT/VERSION")" == "$PIN" && -f "$OUT/lib/libucsim51.a" ]]; then
    say "build/ucsim is ucsim from sdcc $PIN already: nothing to do"
    exit 0
fi

# ---- build tools -------------------------------------------------------------------------------
need=()
command -v bison >/dev/null || need+=(bison)
command -v flex >/dev/null || need+=(flex)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v xz >/dev/null || need+=(xz-utils)
if ((${#need[@]})); then
    say "installing ${need[*]}"
    SUDO=""
    [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    if ! $SUDO apt-get install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
        $SUDO apt-get update >/dev/null 2>&1 || true
        $SUDO apt-get install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
            || unavailable "cannot install ${need[*]} with apt-get"
    fi
fi

# ---- the source package --------------------------------------------------------------------------
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/parts" "$TMP/lists/partial" "$TMP/cache/archives/partial" "$TMP/dl"
# deb822 files: every stanza whose Types has "deb" becomes a deb-src stanza (same URIs, suites, keys).
shopt -s nullglob
for f in /etc/apt/sources.list.d/*.sources; do
    awk '/^Types:/ && / deb( |$)/ { print "Types: deb-src"; next } { print }' \
        "$f" > "$TMP/parts/$(basename "$f")"
done
# one-line files: "deb [opts] uri suite comp..." -> "deb-src ..."
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] || continue
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >> "$TMP/parts/derived.list"
done
APT=(apt-get -q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$TMP/parts"
     -o "Dir::State::Lists=$TMP/lists" -o "Dir::Cache=$TMP/cache")
# as root, apt would hand the download to its _apt user, who cannot enter our mktemp directory
[[ $(id -u) -ne 0 ]] || APT+=(-o APT::Sandbox::User=root)
# A third-party entry without sources only warns; what counts is whether sdcc $PIN can be had.
"${APT[@]}" update >"$TMP/update.log" 2>&1 || true
if ! ( cd "$TMP/dl" && "${APT[@]}" source --download-only "sdcc=$PIN" ) >"$TMP/source.log" 2>&1; then
    why="$(grep -m1 -E '^E:' "$TMP/source.log" || echo 'no deb-src')"
    unavailable "Debian source package sdcc $PIN cannot be had ($why)"
fi
DSC="$TMP/dl/sdcc_$PIN.dsc"
if ! [[ -f "$DSC" ]] || ! grep -qx "Version: $PIN" "$DSC"; then
    echo "ucsim.sh: the fetched source is not sdcc $PIN" >&2
    exit 1
fi
say "fetched sdcc $PIN ($(du -sh "$TMP/dl" | cut -f1)); unpacking"
# dpkg-source checks the tarballs against the .dsc (whose hashes apt checked against the signed index)
# and applies Debian's patches.
dpkg-source -q -x "$DSC" "$TMP/sdcc" >"$TMP/unpack.log" 2>&1 || { cat "$TMP/unpack.log" >&2; exit 1; }

rm -rf "$OUT"
mkdir -p "$OUT/lib"
mv "$TMP/sdcc/sim/ucsim" "$OUT/src"
cp "$DSC" "$OUT/"

# ---- configure and build ---------------------------------------------------------------------------
say "building ucsim's mcs51 core (log: build/ucsim/build.log)"
start=$(date +%s)
disable=()
for p in ds390 avr z80 z180 gbz80 r2k r3ka tlcs m68hc08 s08 xa stm8 pdk st7 p1516 m6809 m6800 m68hc11 \
         mos6502 rxk pblaze; do
    disable+=("--disable-$p-port")
done
JOBS="$(nproc 2>/dev/null || echo 2)"
S51_OBJS=(glob.o sim51.o inc.o jmp.o mov.o logic.o arith.o bit.o timer0.o timer1.o timer2.o serial.o
          port.o interrupt.o wdt.o pca.o mdu.o uc51.o uc52.o uc51r.o uc89c51r.o uc251.o uc517.o uc390.o
          uc390hw.o uc521.o uc88x.o uc320.o uc380.o)
(
    cd "$OUT/src"
    # no -g: a smaller archive; -O2 as ucsim's own default
    ./configure CXXFLAGS="-O2 -pipe" "${disable[@]}" --disable-serio
    # the libraries the s51 program links (not the apps: no main), then the core's objects
    make -j"$JOBS" main_all
    make -j"$JOBS" -C cmd.src cmd.src
    make -j"$JOBS" -C sim.src sim.src
    make -j"$JOBS" -C gui.src gui.src
    make -j"$JOBS" -C s51.src "${S51_OBJS[@]}"
    rm -rf "$OUT/obj" && mkdir -p "$OUT/obj"
    for a in libsim.a libucsimutil.a libguiucsim.a libcmd.a; do
        mkdir "$OUT/obj/${a%.a}"
        (cd "$OUT/obj/${a%.a}" && ar x "$OUT/src/$a")
    done
    # q, not r: two libraries may hold members of the same name, and r would keep only one
    ar qc "$OUT/lib/libucsim51.a" "${S51_OBJS[@]/#/s51.src/}" "$OUT"/obj/*/*.o
    # ucsim's configure adds -ggdb whatever CXXFLAGS say: the debug sections are 3/4 of the archive
    strip --strip-debug "$OUT/lib/libucsim51.a"
    ranlib "$OUT/lib/libucsim51.a"
    rm -rf "$OUT/obj"
) >"$LOG" 2>&1 || {
    echo "ucsim.sh: build failed, see build/ucsim/build.log:" >&2
    tail -5 "$LOG" >&2
    exit 1
}

# The include path, as ucsim's own s51.src/Makefile has it.
for d in src src/s51.src src/sim.src src/cmd.src src/gui.src; do
    echo "-I$OUT/$d"
done | tr '\n' ' ' > "$OUT/cppflags"
echo "$PIN" > "$OUT/VERSION"
size_k=$(du -k "$OUT/lib/libucsim51.a" | cut -f1)
say "built in $(( $(date +%s) - start )) s: build/ucsim/lib/libucsim51.a ($size_k KiB)"

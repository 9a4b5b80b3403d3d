#!/bin/sh
# Prints the 8051 image's code size and internal RAM use from SDCC's .mem/.map and fails if it does
# not fit an 87C51 (4096 B code, 128 B internal RAM). Usage: mcs51_size.sh build/mcs51/profiler
set -e
mem="$1.mem"
code=$(awk '/^ROM\/EPROM\/FLASH/ {print $4}' "$mem" | head -n 1)
code=$(printf '%d' "$code")
# Internal RAM: the stack starts right after the last used byte; the .mem reports its start.
stack=$(sed -n 's/^Stack starts at: 0x\([0-9A-Fa-f]*\).*/\1/p' "$mem")
iram=$(printf '%d' "0x$stack")
echo "8051 code: $code B of 4096; internal RAM before the stack: $iram B of 128"
[ "$code" -le 4096 ] || { echo "8051 image too large for an 87C51" >&2; exit 1; }
[ "$iram" -le 128 ] || { echo "8051 RAM too large for an 87C51" >&2; exit 1; }

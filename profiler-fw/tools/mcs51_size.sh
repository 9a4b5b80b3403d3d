#!/bin/sh
# Prints the 8051 image's code size, internal RAM use and stack room from SDCC's .mem file, and the
# worst-case stack need from the generated .asm files (tools/mcs51_stack.py: deepest call chain from
# main + the Timer0 interrupt), and fails if the image does not fit an 87C51 (4096 B code, 128 B
# internal RAM) or the stack room is smaller than the need. Usage: mcs51_size.sh build/mcs51/profiler
set -e
mem="$1.mem"
dir=$(dirname "$1")
code=$(awk '$1 == "ROM/EPROM/FLASH" {print $4}' "$mem" | head -n 1)
[ -n "$code" ] || { echo "mcs51_size: no code size in $mem" >&2; exit 1; }
# The linker places the stack in the largest free piece of internal RAM and reports its room.
room=$(sed -n 's/^Stack starts at: 0x[0-9A-Fa-f]* (sp set to 0x[0-9A-Fa-f]*) with \([0-9]*\) bytes available.*/\1/p' "$mem")
[ -n "$room" ] || { echo "mcs51_size: no stack line in $mem" >&2; exit 1; }
used=$((128 - room)) # everything but the stack room (the .mem shows no other spare piece here)
need=$(python3 "$(dirname "$0")/mcs51_stack.py" "$dir" | tail -n 1)
python3 "$(dirname "$0")/mcs51_stack.py" "$dir" | sed -n 1p # (reads it all: head's early exit broke the pipe)
echo "8051 code: $code B of 4096; internal RAM: $used B of 128 used, stack room $room B, stack need $need B"
[ "$code" -le 4096 ] || { echo "8051 image too large for an 87C51" >&2; exit 1; }
[ "$room" -ge "$need" ] || { echo "8051 stack room $room B < worst-case need $need B" >&2; exit 1; }

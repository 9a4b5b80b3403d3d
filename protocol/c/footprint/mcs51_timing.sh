#!/bin/sh
# Runs the timing program in ucsim (s51) and prints its results; called by `make mcs51-timing`.
# Usage: mcs51_timing.sh PROGRAM.ihx PROGRAM.map
set -eu
ihx=$1
map=$2
addr=$(awk '{ for (i = 2; i <= NF; i++) if ($i == "_results") print $(i - 1) }' "$map" | head -n 1)
[ -n "$addr" ] || { echo "mcs51_timing.sh: _results not in $map" >&2; exit 1; }
addr=$((0x$addr))
out=$(printf 'step 2000000\ndi 0x%x 0x%x\nquit\n' "$addr" $((addr + 15)) |
    s51 -t 8051 -X 11.0592M -c - "$ihx" 2>&1)
# Dump lines read "0xAA b0 b1 ... b7 ascii": keep the bytes of the lines inside the results array.
set -- $(printf '%s\n' "$out" | awk -v lo="$addr" '
    function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    $1 ~ /^0x[0-9a-f][0-9a-f]$/ {
        a = hex(substr($1, 3))
        if (a < lo || a > lo + 15) next
        for (i = 2; i <= 9 && i <= NF; i++) if ($i ~ /^[0-9a-f][0-9a-f]$/ && n < 16) { print $i; n++ }
    }')
[ $# -eq 16 ] || { echo "mcs51_timing.sh: could not read the simulator's memory dump" >&2; printf '%s\n' "$out" >&2; exit 1; }
w() { echo $((0x$2$1)); }
enc_start_c=$(w $1 $2); enc_next_c=$(w $3 $4); enc_start_r=$(w $5 $6); enc_next_r=$(w $7 $8)
dec_byte=$(w $9 ${10}); dec_delim=$(w ${11} ${12}); check=$(w ${13} ${14}); ok=$(w ${15} ${16})
[ "$ok" = $((0x600D)) ] || { echo "mcs51_timing.sh: the timing program did not decode its own frame" >&2; exit 1; }
us() { awk -v c="$1" 'BEGIN { printf "%.0f", c * 12 / 11.0592 }'; }
echo "mcs51 cycles (machine cycles at 11.0592 MHz, 1 cycle = 1.085 us; one character at 9600 baud = 960 cycles):"
echo "  mm_enc_start COUNTERS (24-byte payload): $enc_start_c ($(us $enc_start_c) us)   RESULT (14): $enc_start_r ($(us $enc_start_r) us)"
echo "  mm_enc_next worst, COUNTERS all non-zero (block of up to 26): $enc_next_c ($(us $enc_next_c) us)   RESULT all non-zero (block of up to 16): $enc_next_r ($(us $enc_next_r) us)"
echo "  mm_dec_push worst data byte: $dec_byte ($(us $dec_byte) us)   delimiter of a FIRE frame: $dec_delim ($(us $dec_delim) us)   mm_msg_check: $check ($(us $check) us)"

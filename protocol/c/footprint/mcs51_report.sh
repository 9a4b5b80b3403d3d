#!/bin/sh
# Prints the 8051 footprint of the protocol code from SDCC's outputs; called by `make mcs51`.
# Usage: mcs51_report.sh BUILD_DIR CAPACITY
# BUILD_DIR holds the protocol modules (mm_*.rel), the footprint program (main_8051.asm, fp.mem)
# and the same program without the protocol calls (base.mem).
# Exit status 1 if the protocol code exceeds the 87C51's 4 KB of code or 128 B of internal RAM.
set -eu
dir=$1
cap=$2
CODE_AIM=1024
RAM_AIM=24
CODE_MAX=4096
RAM_MAX=128

# code and RAM bytes of one relocatable module, from its area records ("A name size HEX ...")
module_sizes() {
    code=0
    ram=0
    bits=0
    while read -r tag area _ size _; do
        [ "$tag" = A ] || continue
        case $area in
        CSEG | CONST | HOME | GSINIT* | GSFINAL | XINIT | CABS) code=$((code + 0x$size)) ;;
        DSEG | OSEG | ISEG | IABS) ram=$((ram + 0x$size)) ;;
        BSEG) bits=$((bits + 0x$size)) ;;
        esac
    done <"$1"
    ram=$((ram + (bits + 7) / 8))
}

# size of a variable of the footprint program: the ".ds N" after its label
var_size() {
    sed -n "/^_$1:/{n;s/^[[:space:]]*\.ds[[:space:]]*//p;}" "$dir/main_8051.asm"
}

# ROM size and first stack byte of a linked program, from its .mem file
rom_size() {
    awk '$1 == "ROM/EPROM/FLASH" { print $4 }' "$1"
}
stack_start() {
    sed -n 's/^Stack starts at: \(0x[0-9a-fA-F]*\).*/\1/p' "$1"
}

# every figure must have been found: a changed SDCC output format must not print zeros
need() {
    case $2 in
    '' | *[!0-9a-fA-Fx]*) echo "mcs51_report.sh: could not read $1 from SDCC's output in $dir" >&2; exit 1 ;;
    esac
}

mod_code=0
mod_ram=0
line=
for m in mm_crc mm_enc mm_dec mm_msg; do
    module_sizes "$dir/$m.rel"
    mod_code=$((mod_code + code))
    mod_ram=$((mod_ram + ram))
    line="$line $m $code/$ram,"
done
module_sizes "$dir/mm_le.rel"
echo "mcs51 modules, code/RAM bytes:${line%,} (mm_le $code/$ram, not linked: the footprint program reads no fields)"

enc=$(var_size enc)
dec=$(var_size dec)
full_rom=$(rom_size "$dir/fp.mem")
base_rom=$(rom_size "$dir/base.mem")
full_sp=$(stack_start "$dir/fp.mem")
base_sp=$(stack_start "$dir/base.mem")
need "the size of enc" "$enc"
need "the size of dec" "$dec"
need "the ROM size" "$full_rom"
need "the baseline ROM size" "$base_rom"
need "the stack start" "$full_sp"
need "the baseline stack start" "$base_sp"
state=$((enc + dec))
delta_rom=$((full_rom - base_rom))
delta_ram=$((full_sp - base_sp))
echo "mcs51 state structs (SDCC layout): struct mm_enc $enc B, struct mm_dec $dec B (MM_DEC_CAPACITY=$cap)"
echo "mcs51 footprint program: $full_rom B code with the protocol, $base_rom B without: +$delta_rom B code, +$delta_ram B internal RAM"

code=$delta_rom
total_ram=$((state + mod_ram))
echo "mcs51 protocol footprint: code $code B (limit $CODE_AIM), RAM $state B (limit $RAM_AIM)"
echo "  code: what linking the protocol adds to the program: the modules' $mod_code B, SDCC's __gptrget and the call sites"
echo "  RAM: encoder + decoder state; the functions' static parameters/locals (SDCC, not reentrant) add $mod_ram B: $total_ram B in all"
echo "  hard 87C51 limits: code $CODE_MAX B, internal RAM $RAM_MAX B"

status=0
# The encoder (TX ISR) and the decoder (RX ISR, or main) may run in different contexts and share
# only mm_crc16_shift8; that is safe only while SDCC keeps its argument and locals in registers.
if grep -q '^_mm_crc16_shift8_' "$dir/mm_crc.asm"; then
    echo "ERROR: SDCC gave mm_crc16_shift8 static data: it is no longer safe to share between contexts"
    status=1
fi
if [ "$code" -gt "$CODE_AIM" ]; then echo "WARNING: mcs51 protocol code $code B is over the $CODE_AIM B aim"; fi
if [ "$state" -gt "$RAM_AIM" ]; then echo "WARNING: mcs51 protocol state $state B is over the $RAM_AIM B aim"; fi
if [ "$code" -gt "$CODE_MAX" ]; then echo "ERROR: mcs51 protocol code $code B exceeds the 87C51's $CODE_MAX B"; status=1; fi
if [ "$total_ram" -gt "$RAM_MAX" ]; then echo "ERROR: mcs51 protocol RAM $total_ram B exceeds the 87C51's $RAM_MAX B"; status=1; fi
exit $status

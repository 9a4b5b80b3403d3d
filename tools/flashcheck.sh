#!/bin/sh
# Checks before a flash target runs its programmer, one clear line each and exit 2 (the Makefiles' flash
# targets call it; docs/hardware.md, "Flashing", says which chip needs which tool and programmer):
#   tools/flashcheck.sh tool NAME "WHY/HOW TO GET IT"   the programmer's program is on PATH
#   tools/flashcheck.sh port PORT                       the serial port exists (a pyserial URL is let through)
set -eu
what=$1; shift
case $what in
tool)
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "flash: '$1' not found: $2" >&2
        exit 2
    fi ;;
port)
    case $1 in
    *://*) ;;
    *)  if [ ! -e "$1" ]; then
            echo "flash: no serial port $1: plug the board in, find its port with 'mmrig boards', then PORT=..." >&2
            exit 2
        fi ;;
    esac ;;
*)  echo "flashcheck: unknown check '$what'" >&2; exit 2 ;;
esac

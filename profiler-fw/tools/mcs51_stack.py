#!/usr/bin/env python3
"""Worst-case stack need of the 8051 image, from SDCC's generated .asm files.

Usage: mcs51_stack.py build/mcs51   (prints the need in bytes and the chain that needs it)

Method (every function is non-reentrant, SDCC small model: locals are not on the stack):
  - each function's text is read in order; `push` adds 1 byte, `pop` removes 1 (the running count at
    a call site is what that function holds on the stack there; the function's own peak counts too);
  - `lcall`/`acall` to a function adds 2 bytes (return address) plus the callee's need; a tail jump
    (`ljmp`/`sjmp` to a function's label) adds the callee's need without a return address;
  - library routines (names starting with __, e.g. __gptrget) are leaves that push nothing (checked
    for the routines this image links: __gptrget uses no stack), so a call to one costs 2 bytes;
  - no recursion, no calls through pointers (the script fails if it finds either);
  - total = need(main) + the Timer0 ISR, which may interrupt at main's deepest point:
    2 bytes (the interrupt's return address) + need(t0_isr). No other interrupt is enabled, and the
    ISR does not nest (it is the only one).
"""
import os
import re
import sys

FUNC_RE = re.compile(r"^(_[A-Za-z0-9_]+):\s*$")
CALL_RE = re.compile(r"^\s*(lcall|acall|ljmp|sjmp|ajmp)\s+(_[A-Za-z0-9_]+)\s*$")


def parse(folder):
    funcs = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".asm"):
            continue
        area = None
        cur = None
        with open(os.path.join(folder, name)) as f:
            for line in f:
                code = line.split(";", 1)[0]
                m = re.match(r"^\s*\.area\s+(\S+)", code)
                if m:
                    area = m.group(1)
                    cur = None
                    continue
                if area != "CSEG":
                    continue
                m = FUNC_RE.match(code)
                if m:
                    cur = funcs.setdefault(m.group(1), {"peak": 0, "calls": [], "depth": 0})
                    continue
                if cur is None:
                    continue
                s = code.strip()
                if s.startswith("push"):
                    cur["depth"] += 1
                    cur["peak"] = max(cur["peak"], cur["depth"])
                elif s.startswith("pop"):
                    cur["depth"] = max(0, cur["depth"] - 1)
                elif "__sdcc_call_dptr" in s:  # (jmp @a+dptr: a switch table, local)
                    sys.exit("mcs51_stack: indirect call/jump in %s: not analysable" % name)
                m = CALL_RE.match(code)
                if m:
                    op, target = m.groups()
                    ret = 2 if op in ("lcall", "acall") else 0
                    cur["calls"].append((cur["depth"], ret, target))
    return funcs


def need(funcs, name, stack=()):
    if name in stack:
        sys.exit("mcs51_stack: recursion through %s" % name)
    f = funcs.get(name)
    if f is None:
        if name.startswith("__"):
            return 0, [name]
        return 0, [name]  # a local label reached by a jump, not a function
    best, chain = f["peak"], [name]
    for depth, ret, target in f["calls"]:
        if target not in funcs and not target.startswith("__"):
            continue  # jump to a local label
        n, c = need(funcs, target, stack + (name,))
        if depth + ret + n > best:
            best, chain = depth + ret + n, [name] + c
    return best, chain


def main():
    funcs = parse(sys.argv[1])
    m, mchain = need(funcs, "_main")
    i, ichain = need(funcs, "_t0_isr")
    total = m + 2 + i
    print("stack need: %d B = main %d B (%s) + Timer0 interrupt 2 B + t0_isr %d B (%s)"
          % (total, m, " > ".join(mchain), i, " > ".join(ichain)))
    print(total)


if __name__ == "__main__":
    main()

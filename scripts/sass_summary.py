#!/usr/bin/env python3
"""Opcode histogram of each kernel in a `cuobjdump -sass` dump (the instruction mix that bounds the
NUDFT kernels: MUFU for the SFU, FFMA/FMUL/FADD for the FMA pipe, LDC/ULDC for constant loads), and
the loop body of the hottest loop (the longest backward branch target range) of a few kernels.
Usage: sass_summary.py SASS.txt [substring ...]"""
import re
import sys

def main():
    text = open(sys.argv[1]).read()
    wanted = sys.argv[2:]
    funcs = re.split(r"\n\s*Function : ", text)[1:]
    for f in funcs:
        name = f.split("\n", 1)[0].strip()
        if wanted and not any(w in name for w in wanted):
            continue
        ins = re.findall(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);", f)
        hist = {}
        for _, op, _ in ins:
            base = op.split(".")[0]
            hist[base] = hist.get(base, 0) + 1
        # hottest loop: a BRA jumping backwards, longest body
        addr = [int(a, 16) for a, _, _ in ins]
        best = None
        for i, (a, op, rest) in enumerate(ins):
            if op.startswith("BRA"):
                m = re.search(r"0x([0-9a-f]+)", rest)
                if m:
                    tgt = int(m.group(1), 16)
                    if tgt < int(a, 16):
                        body = [x for x in ins if tgt <= int(x[0], 16) <= int(a, 16)]
                        if best is None or len(body) > len(best):
                            best = body
        loop = {}
        for _, op, _ in best or []:
            base = op.split(".")[0]
            loop[base] = loop.get(base, 0) + 1
        top = ", ".join("%s %d" % kv for kv in sorted(loop.items(), key=lambda kv: -kv[1])[:12])
        print("%s\n  total %d; longest loop %d instr: %s" % (name, len(ins), len(best or []), top))

if __name__ == "__main__":
    main()

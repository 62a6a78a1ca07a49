#!/usr/bin/env python3
"""Where a CUDA kernel's instructions go: the loops of its SASS and what each holds, by class.

    cuobjdump -sass FILE | tools/scripts/sass_loops.py [--function REGEX] [--min 8]
    tools/scripts/sass_loops.py --sass FILE.sass [--function REGEX]

Reads `cuobjdump -sass` output (cuobjdump and nvdisasm: CUDA toolkit, or PyPI's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm). For each function (mangled name; --function picks by regex): its instruction count, then
every loop -- a backward branch and the instructions from its target to it, nested loops inside outer ones --
with the loop's instruction count by class:

  load.global / load.shared / store.*   LDG / LDS / STG / STS (and their widths: .64, .128)
  fp32                                  FFMA FMUL FADD FMNMX FSETP FSEL ... (fp32 arithmetic)
  convert                               F2F, F2FP, HADD2.F32, I2F, F2I, PRMT (element conversions, packing)
  shuffle / barrier / mufu              SHFL; BAR, BSSY, BSYNC, WARPSYNC; MUFU (ex2, rcp)
  int / address                         IMAD IADD3 LEA SHF LOP3 ISETP IMNMX SEL MOV ... (integer, addresses)
  control                               BRA, EXIT, NOP, ...

The counts are static (each instruction once); a loop's dynamic weight is its trip count, which the
kernel's shapes give (docs/cuda.md, "Where the instructions go").

    tools/scripts/sass_loops.py --sass FILE.sass --function REGEX --path 0x8c30-0xa010 [--taken 0x46c0,0x4920]

--path counts what one warp issues in one iteration of the loop from START to its back-edge at END,
not the static body: the walk starts at START, takes every unconditional branch, takes the
conditional branches listed in --taken (a uniform branch the common case takes, e.g. over a
last-block-only masking), falls through every other (a branch not taken, or a divergent one whose
skipped code some lanes run), and ends at END. A loop whose body holds a rarely taken branch is
counted as the common case runs it; each decision is written in the command.
"""

import argparse
import re
import sys
from collections import Counter

INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
FUNCTION = re.compile(r"Function : (\S+)")
BRANCH_TARGET = re.compile(r"0x([0-9a-f]+)")

CLASSES = [
    ("load.global", ("LDG",)),
    ("load.shared", ("LDS", "LDSM")),
    ("load.const", ("LDC", "ULDC")),
    ("store", ("STG", "STS", "ST.", "STL")),
    ("local", ("LDL", "STL")),
    ("shuffle", ("SHFL",)),
    ("barrier", ("BAR", "BSSY", "BSYNC", "WARPSYNC", "VOTE", "MEMBAR")),
    ("mufu", ("MUFU",)),
    ("convert", ("F2F", "F2FP", "HADD2.F32", "I2F", "F2I", "PRMT", "I2FP", "F2IP")),
    ("fp32", ("FFMA", "FMUL", "FADD", "FMNMX", "FSETP", "FSEL", "FCHK", "FSWZADD", "HFMA2", "HADD2", "HMUL2")),
    ("control", ("BRA", "EXIT", "NOP", "RET", "CALL", "BREAK", "BMOV", "YIELD", "JMP")),
]


def instruction_class(opcode):
    for name, prefixes in CLASSES:
        if any(opcode == p or opcode.startswith(p + ".") or (p.endswith(".") and opcode.startswith(p))
               for p in prefixes):
            return name
    return "int/address"


def parse(lines):
    """{function: [(address, predicate, opcode, operands)]} in program order."""
    functions, current = {}, None
    for line in lines:
        m = FUNCTION.search(line)
        if m:
            current = m.group(1)
            functions[current] = []
            continue
        m = INSTRUCTION.match(line)
        if m and current is not None:
            functions[current].append((int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3), m.group(4)))
    return functions


def loops(code):
    """(start address, branch address) of every backward branch, outermost first. A backward branch
    whose range holds an EXIT is not a loop: it is out-of-line code placed after the function's end
    (a divergent shuffle's fallback) jumping back into the body."""
    exits = [a for a, _, op, _ in code if op == "EXIT"]
    found = []
    for address, _, opcode, operands in code:
        if opcode.startswith("BRA"):
            t = BRANCH_TARGET.search(operands)
            if t and int(t.group(1), 16) <= address:
                lo = int(t.group(1), 16)
                if not any(lo <= e <= address for e in exits):
                    found.append((lo, address))
    return sorted(set(found), key=lambda r: (r[0], -r[1]))


def summary(code, lo, hi):
    body = [(a, op) for a, _, op, _ in code if lo <= a <= hi]
    classes = Counter(instruction_class(op) for _, op in body)
    widths = Counter(op for _, op in body if op.startswith(("LDG", "LDS", "STG", "STS")))
    return len(body), classes, widths


def walk(code, lo, hi, taken):
    """The instructions one warp issues from `lo` to the back-edge at `hi` (see --path)."""
    index = {a: i for i, (a, _, _, _) in enumerate(code)}
    if lo not in index or hi not in index:
        raise ValueError(f"no instruction at 0x{lo:04x} or 0x{hi:04x}")
    i, path = index[lo], []
    while True:
        address, predicate, opcode, operands = code[i]
        if opcode != "NOP":
            path.append((address, opcode))
        if address == hi:
            return path
        if len(path) > 100000:
            raise ValueError("the walk does not reach the back-edge")
        if opcode.startswith("BRA") and not opcode.startswith("BRA.DIV"):
            t = BRANCH_TARGET.search(operands)
            unconditional = predicate in ("", "@PT")
            if t and (unconditional or address in taken):
                i = index[int(t.group(1), 16)]
                continue
        i += 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sass", help="cuobjdump -sass output (default: standard input)")
    parser.add_argument("--function", help="only functions whose mangled name matches this regex")
    parser.add_argument("--min", type=int, default=8, help="leave out loops shorter than this (default 8)")
    parser.add_argument("--path", help="START-END: one iteration's path from START to the back-edge at END")
    parser.add_argument("--taken", default="", help="with --path: the conditional branches taken (addresses)")
    args = parser.parse_args(argv)
    text = open(args.sass).read().splitlines() if args.sass else sys.stdin.read().splitlines()
    functions = parse(text)
    if not functions:
        print("sass_loops: no function in the input (is it `cuobjdump -sass` output?)", file=sys.stderr)
        return 2
    shown = 0
    for name, code in functions.items():
        if args.function and not re.search(args.function, name):
            continue
        shown += 1
        if args.path:
            try:
                lo, hi = (int(x, 16) for x in args.path.split("-"))
                taken = {int(x, 16) for x in args.taken.split(",") if x}
                path = walk(code, lo, hi, taken)
            except ValueError as e:
                print(f"sass_loops: --path {args.path}: {e}", file=sys.stderr)
                return 2
            classes = Counter(instruction_class(op) for _, op in path)
            widths = Counter(op for _, op in path if op.startswith(("LDG", "LDS", "STG", "STS")))
            print(f"{name}: path 0x{lo:04x}-0x{hi:04x}: {len(path)} instructions: "
                  + ", ".join(f"{k} {v}" for k, v in classes.most_common()))
            if widths:
                print("  memory: " + ", ".join(f"{k} {v}" for k, v in sorted(widths.items())))
            continue
        total, classes, _ = summary(code, 0, 1 << 62)
        print(f"{name}: {total} instructions")
        print("  " + ", ".join(f"{k} {v}" for k, v in classes.most_common()))
        found = loops(code)
        for lo, hi in found:
            n, classes, widths = summary(code, lo, hi)
            if n < args.min:
                continue
            depth = sum(1 for a, b in found if a <= lo and hi <= b and (a, b) != (lo, hi))
            print(f"  {'  ' * depth}loop 0x{lo:04x}-0x{hi:04x}: {n} instructions: "
                  + ", ".join(f"{k} {v}" for k, v in classes.most_common()))
            if widths:
                print(f"  {'  ' * depth}  memory: " + ", ".join(f"{k} {v}" for k, v in sorted(widths.items())))
    if shown == 0:
        print(f"sass_loops: no function matches --function {args.function!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Flips one bit of one element of a tensor in a safetensors file, in place (standard library only).

Reproduces a golden damaged after writing, for `pao diff` and `pao verify` to refuse
(docs/golden.md, "Golden integrity"):

    tools/scripts/flip_bit.py corrupted/CASE.safetensors out_exact 62        # element 0, bit 62
    tools/scripts/flip_bit.py corrupted/CASE.safetensors out_exact 62 --element 5
"""
import argparse
import json
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I64": 8, "I32": 4, "U8": 1}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("tensor")
    parser.add_argument("bit", type=int, help="bit of the element, 0 = least significant (little-endian)")
    parser.add_argument("--element", type=int, default=0, help="flat index of the element (default 0)")
    args = parser.parse_args()
    with open(args.file, "r+b") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        if args.tensor not in header:
            sys.exit(f"{args.file}: no tensor '{args.tensor}'")
        entry = header[args.tensor]
        size = SIZES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        if not 0 <= args.bit < 8 * size or not 0 <= args.element < (end - begin) // size:
            sys.exit(f"{args.tensor}: element {args.element}, bit {args.bit} is outside the tensor")
        at = 8 + header_len + begin + args.element * size + args.bit // 8
        f.seek(at)
        byte = f.read(1)[0] ^ (1 << (args.bit % 8))
        f.seek(at)
        f.write(bytes([byte]))


if __name__ == "__main__":
    main()

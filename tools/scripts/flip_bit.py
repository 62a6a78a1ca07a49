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

# Bits per element of every dtype of the safetensors format: what pao writes (lib/include/pao/core/dtype.hpp:
# F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I32 I64 U8 I8) and what a vendor's file may hold beside it.
BITS = {
    "F64": 64, "F32": 32, "F16": 16, "BF16": 16,
    "F8_E4M3": 8, "F8_E5M2": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "F8_E8M0": 8,
    "F6_E2M3": 6, "F6_E3M2": 6, "F4": 4, "C64": 64,
    "I64": 64, "I32": 32, "I16": 16, "I8": 8, "U64": 64, "U32": 32, "U16": 16, "U8": 8, "BOOL": 8,
}


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
        bits = BITS.get(entry["dtype"])
        if bits is None:
            sys.exit(f"{args.tensor}: dtype {entry['dtype']} is not one of safetensors' ({', '.join(BITS)})")
        begin, end = entry["data_offsets"]
        if not 0 <= args.bit < bits or not 0 <= args.element < (end - begin) * 8 // bits:
            sys.exit(f"{args.tensor}: element {args.element}, bit {args.bit} is outside the tensor")
        # Elements are packed little-endian, sub-byte ones (F4, F6) too: bit b of element e is bit
        # e * bits + b of the data.
        position = args.element * bits + args.bit
        at = 8 + header_len + begin + position // 8
        f.seek(at)
        byte = f.read(1)[0] ^ (1 << (position % 8))
        f.seek(at)
        f.write(bytes([byte]))


if __name__ == "__main__":
    main()

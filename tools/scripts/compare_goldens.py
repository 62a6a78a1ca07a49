#!/usr/bin/env python3
"""Compare two folders of pao goldens tensor by tensor, by the sha256 of each tensor's bytes.

    tools/scripts/compare_goldens.py BEFORE_DIR AFTER_DIR [--metadata]

Reads every *.safetensors file (and every per-case folder of .npy files written with
`pao golden --format npy`) in both folders with the standard library only, hashes the raw
bytes of each tensor together with its dtype and shape, and lists:
  - cases present in one folder only,
  - tensors present in one file only,
  - tensors whose dtype, shape or bytes differ,
  - with --metadata, the `__metadata__` keys whose values differ (safetensors only).
Exit status: 0 when every tensor is bit-identical (and, with --metadata, every metadata value),
1 when something differs, 2 on unreadable input. Use it to show that a refactoring did not move
a single bit of the goldens:

    pao golden --suite smoke --out /tmp/before   # on the old commit
    pao golden --suite smoke --out /tmp/after    # on the new one
    tools/scripts/compare_goldens.py /tmp/before /tmp/after
"""

import argparse
import hashlib
import json
import os
import struct
import sys


def fail(message):
    print(f"compare_goldens: {message}", file=sys.stderr)
    sys.exit(2)


def read_safetensors(path):
    """{tensor name: (dtype, shape, sha256)}, metadata dict."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            fail(f"{path}: shorter than the 8-byte header length")
        (header_len,) = struct.unpack("<Q", raw)
        size = os.fstat(f.fileno()).st_size
        if header_len > size - 8:
            fail(f"{path}: header length {header_len} exceeds the file")
        header = json.loads(f.read(header_len))
        base = 8 + header_len
        tensors = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            begin, end = info["data_offsets"]
            f.seek(base + begin)
            data = f.read(end - begin)
            if len(data) != end - begin:
                fail(f"{path}: tensor {name} runs past the end of the file")
            tensors[name] = (info["dtype"], tuple(info["shape"]), hashlib.sha256(data).hexdigest())
        return tensors, header.get("__metadata__", {})


def read_npy_folder(folder):
    """{tensor name: (dtype, shape, sha256)} of a per-case folder of .npy files."""
    tensors = {}
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".npy"):
            continue
        with open(os.path.join(folder, entry), "rb") as f:
            magic = f.read(8)
            if magic[:6] != b"\x93NUMPY":
                fail(f"{folder}/{entry}: not an .npy file")
            major = magic[6]
            (hlen,) = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))
            header = f.read(hlen).decode("latin1").strip()
            data = f.read()
        tensors[entry[: -len(".npy")]] = (header, (), hashlib.sha256(data).hexdigest())
    return tensors


def read_folder(folder):
    """{case name: ({tensor: (dtype, shape, sha256)}, metadata)}."""
    if not os.path.isdir(folder):
        fail(f"{folder}: not a folder")
    cases = {}
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry)
        if entry.endswith(".safetensors"):
            cases[entry[: -len(".safetensors")]] = read_safetensors(path)
        elif os.path.isdir(path) and any(n.endswith(".npy") for n in os.listdir(path)):
            cases[entry] = (read_npy_folder(path), {})
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--metadata", action="store_true", help="also compare __metadata__ values")
    args = parser.parse_args()

    before, after = read_folder(args.before), read_folder(args.after)
    differences = 0
    compared_tensors = 0

    def report(text):
        nonlocal differences
        differences += 1
        print(text)

    for name in sorted(set(before) - set(after)):
        report(f"only in {args.before}: case {name}")
    for name in sorted(set(after) - set(before)):
        report(f"only in {args.after}: case {name}")
    for name in sorted(set(before) & set(after)):
        (tb, mb), (ta, ma) = before[name], after[name]
        for t in sorted(set(tb) - set(ta)):
            report(f"{name}: tensor {t} only in {args.before}")
        for t in sorted(set(ta) - set(tb)):
            report(f"{name}: tensor {t} only in {args.after}")
        for t in sorted(set(tb) & set(ta)):
            compared_tensors += 1
            (db, sb, hb), (da, sa, ha) = tb[t], ta[t]
            if db != da or sb != sa:
                report(f"{name}: tensor {t}: {db}{list(sb)} -> {da}{list(sa)}")
            elif hb != ha:
                report(f"{name}: tensor {t}: bytes differ (sha256 {hb[:16]}... -> {ha[:16]}...)")
        if args.metadata:
            for key in sorted(set(mb) | set(ma)):
                if mb.get(key) != ma.get(key):
                    report(f"{name}: metadata {key}: {mb.get(key)!r} -> {ma.get(key)!r}")

    common = len(set(before) & set(after))
    print(
        f"{common} cases in both folders, {compared_tensors} tensors compared: "
        + ("all bit-identical" if differences == 0 else f"{differences} difference(s)")
    )
    sys.exit(0 if differences == 0 else 1)


if __name__ == "__main__":
    main()

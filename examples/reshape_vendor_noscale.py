#!/usr/bin/env python3
"""A reshape_and_cache "vendor" with a real bug: it forgets the fp8 scale (codes = fp8(x) instead of
fp8(x / scale)). For trying `pao diff` on a cache write; needs numpy, safetensors and ml_dtypes.

    pao golden --case examples/cases/reshape-fp8-hnd.json --out g
    .venv/bin/python examples/reshape_vendor_noscale.py g/<id>.safetensors noscale.safetensors
    pao diff g/<id>.safetensors noscale.safetensors      # FAIL, pattern scale-ignored

`.venv` is the one the README's set-up makes. The golden's caches are HND ([blocks, kv_heads, block_size, head_size]); other layouts are refused.
"""
import sys

import ml_dtypes
import numpy as np
import safetensors.numpy

for name in ("float8_e4m3fn", "float8_e5m2"):  # safetensors' numpy backend looks fp8 up in numpy
    setattr(np, name, getattr(ml_dtypes, name))


def main(golden_path, out_path):
    golden = safetensors.numpy.load_file(golden_path)
    with open(golden_path, "rb") as f:  # the layout, from the golden's metadata
        import json, struct
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    if header["__metadata__"]["kv_layout"] != "hnd":
        sys.exit("this example writes HND caches only")
    out = {}
    for side in ("key", "value"):
        cache = golden[side + "_cache_before"].copy()
        block_size = cache.shape[2]
        for token, slot in enumerate(golden["slot_mapping"]):
            if slot < 0:
                continue  # padding
            cache[slot // block_size, :, slot % block_size, :] = (
                golden[side][token].astype(np.float32).astype(cache.dtype))  # the bug: no / scale
        out[side + "_cache"] = cache
    safetensors.numpy.save_file(out, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

#!/usr/bin/env python3
"""pao golden's memory estimate against the peak it measures: for each case, the estimate (what
`pao golden --memory-limit 1` refuses with) and the peak resident set of a real run (the child's
rusage, Linux). Without case files it measures the three cases of docs/golden.md "Memory".

    tools/scripts/golden_peak_memory.py PAO [CASE.json ...]
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

DOC_CASES = {  # docs/golden.md "Memory": a long decode, an fp8 decode with V2 partials, a prefill
    "decode-2M-f16": {"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [2000000]},
    "decode-500k-fp8": {"num_heads": 8, "num_kv_heads": 2, "head_size": 128, "dtype": "bf16",
                        "kv_cache_dtype": "fp8_e4m3", "seq_lens": [300000, 200000], "partition_size": 256},
    "prefix-7000-over-105k": {"kernel": "prefix", "num_heads": 8, "num_kv_heads": 2, "head_size": 64,
                              "dtype": "f16", "query_lens": [4000, 3000], "seq_lens": [100000, 5000]},
}


def peak_of(cmd):
    """Exit status and peak resident set (bytes) of one child."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss * 1024


def measure(pao, name, case):
    with tempfile.TemporaryDirectory() as out:
        refused = subprocess.run([pao, "golden", "--case", case, "--out", out, "--memory-limit", "1"],
                                 capture_output=True, text=True)
        found = re.search(r"needs about ([0-9.]+ [kMG]?B)", refused.stderr)
        if refused.returncode != 2 or not found:
            sys.exit(f"golden_peak_memory: {name}: no estimate in: {refused.stderr.strip()}")
        status, peak = peak_of([pao, "golden", "--case", case, "--out", out])
        if status != 0:
            sys.exit(f"golden_peak_memory: {name}: pao golden exited {status}")
        print(f"{name}: estimated {found.group(1)}, measured peak {peak / 1e6:.1f} MB", flush=True)


def main(pao, case_files):
    if case_files:
        for f in case_files:
            measure(pao, f, f)
        return
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in DOC_CASES.items():
            path = pathlib.Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(case))
            measure(pao, name, str(path))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])

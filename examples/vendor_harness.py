#!/usr/bin/env python3
"""A vendor test harness for pao goldens: the template to copy.

    python examples/vendor_harness.py GOLDENS OUTPUTS [--pao PATH] [--demo] [--cases GLOB] [-- PAO DIFF OPTIONS]

For every case of the golden folder GOLDENS (its manifest.json, written by `pao golden`) it

  1. loads the golden with safetensors.torch (bf16 and fp8 tensors load as torch.bfloat16,
     torch.float8_e4m3fn, torch.float8_e5m2) together with the case (the golden's __metadata__),
  2. calls run_vendor_kernel(case, tensors), the function YOU replace with a call of your kernel,
  3. saves what it returns as OUTPUTS/<case id>.safetensors, in the golden's dtypes -- or, when it
     raises, its message as OUTPUTS/<case id>.error (pao diff prints it as the reason; the case fails),
  4. runs `pao diff GOLDENS OUTPUTS` and exits with its status (0 all pass, 1 a mismatch, 2 bad input).

Demo mode (--demo): the built-in run_vendor_kernel returns the golden's own `out` (reshape_and_cache:
its `key_cache` / `value_cache`), so that the diff passes -- it shows the plumbing works, it judges no
kernel. Without --demo the stub raises, every case gets a .error file, and the diff fails: replace
the stub.

What a kernel may return (docs/golden.md, "A vendor harness in Python"): `out` (decode or prefix);
for decode also `v1.out`, `v2.out` and the V2 partials `v2.tmp_out`, `v2.max_logits`, `v2.exp_sums`
(vLLM's names tmp_out, max_logits, exp_sums work too); for prefix also `prefix.out`; for
reshape_and_cache `key_cache` and `value_cache`, the whole pools after the write (docs/golden.md,
"reshape_and_cache goldens": pao diff compares them bit for bit); for write_and_attend `out` and
the written caches (an integer cache's key_cache_scale, ... too; docs/golden.md, "write_and_attend
goldens"). Each in the golden's dtype and
shape (pao diff refuses an f32 `out` for a bf16 golden unless --allow-dtype-mismatch).

The helpers (load_case, write_outputs, write_error, find_pao, run_pao_golden, run_pao_diff,
for_each_case, out_verdict_line, num, first_lines) are imported by examples/vendor_harness_ipex.py
and examples/vendor_harness_flex.py, the worked examples on real kernels.
"""

import argparse
import fnmatch
import json
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent

# Names pao diff reads from a vendor's file (anything else is ignored with a note).
OUTPUT_NAMES = {
    "decode": ("out", "output", "v1.out", "v2.out", "v2.tmp_out", "v2.max_logits", "v2.exp_sums",
               "tmp_out", "max_logits", "exp_sums"),
    "prefix": ("out", "output", "prefix.out"),
    "reshape_and_cache": ("key_cache", "value_cache"),
    "write_and_attend": ("out", "output", "write_and_attend.out", "key_cache", "value_cache", "key_cache_scale",
                         "key_cache_zero_point", "value_cache_scale", "value_cache_zero_point"),
}
# The kernels whose outputs include the caches they write; those whose new tokens are rows of
# query / key / value (query_start_loc), after their context in the cache.
CACHE_WRITERS = ("reshape_and_cache", "write_and_attend")
PREFILL_KERNELS = ("prefix", "write_and_attend")
# The golden tensor whose dtype/shape each output must have.
_REFERENCE = {"output": "out", "tmp_out": "v2.tmp_out", "max_logits": "v2.max_logits",
              "exp_sums": "v2.exp_sums"}


def _safetensors():
    """safetensors.safe_open, .torch.load_file, .torch.save_file, imported when first needed (so that
    --help works in a python without torch)."""
    try:
        from safetensors import safe_open
        from safetensors.torch import load_file, save_file
    except ImportError as e:
        raise SystemExit(f"vendor_harness: {e}: this harness needs torch and safetensors "
                         "(pip install torch safetensors, or run it with a venv's python that has them)")
    return safe_open, load_file, save_file


class Case:
    """One golden: its id, kernel, parsed case JSON (`spec`) and the raw string metadata (`meta`)."""

    def __init__(self, case_id, path, meta):
        self.id = case_id
        self.path = path
        self.meta = meta                          # every value a string, as pao wrote it
        self.spec = json.loads(meta["case"])      # the canonical case: numbers, lists, booleans
        self.kernel = meta["kernel"]              # "decode", "prefix", "reshape_and_cache", "write_and_attend"

    # Typed accessors for the parameters a kernel call needs.
    def int(self, key):
        return int(self.meta[key])

    def float(self, key):
        return float(self.meta[key])

    def ints(self, key):
        value = self.meta.get(key, "")
        return [int(v) for v in value.split(",")] if value else []

    def flag(self, key):
        return self.meta.get(key) == "true"


def load_case(path, case_id=None):
    """(Case, {name: torch tensor}) of one golden .safetensors file."""
    safe_open, load_file, _ = _safetensors()
    tensors = load_file(str(path))
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata()
    return Case(case_id or meta["case_id"], pathlib.Path(path), meta), tensors


def for_each_case(goldens, glob=None):
    """Yield (Case, tensors) for the cases of a golden folder's manifest, in manifest order."""
    goldens = pathlib.Path(goldens)
    manifest = json.loads((goldens / "manifest.json").read_text())
    for entry in manifest["cases"]:
        if glob and not fnmatch.fnmatchcase(entry["id"], glob):
            continue
        if entry.get("format", "safetensors") != "safetensors":
            raise SystemExit(f"{entry['id']}: this harness reads safetensors goldens "
                             "(pao golden --format safetensors, the default)")
        yield load_case(goldens / entry["file"], entry["id"])


def write_outputs(outputs_dir, case, tensors, outputs, as_is=()):
    """Save a kernel's outputs as OUTPUTS/<id>.safetensors; check names, dtypes and shapes first
    (but for the names in `as_is`: a cache in a layout pao diff reads itself, e.g. OpenVINO's bytes)."""
    allowed = OUTPUT_NAMES[case.kernel]
    clean = {}
    for name, value in outputs.items():
        if name not in allowed:
            raise ValueError(f"{case.id}: output '{name}' is not one pao diff reads "
                             f"for {case.kernel} (names: {', '.join(allowed)})")
        if name in as_is:
            clean[name] = value.detach().cpu().contiguous()
            continue
        ref = tensors[_REFERENCE.get(name, name)]
        fp8_codes = (case.kernel in CACHE_WRITERS and str(value.dtype) == "torch.uint8"         # vLLM's
                     and str(ref.dtype) in ("torch.float8_e4m3fn", "torch.float8_e5m2"))         # fp8 codes
        if (value.dtype != ref.dtype and not fp8_codes) or tuple(value.shape) != tuple(ref.shape):
            raise ValueError(f"{case.id}: output '{name}' is {value.dtype} {list(value.shape)}, "
                             f"the golden's is {ref.dtype} {list(ref.shape)}")
        clean[name] = value.detach().cpu().contiguous()
    path = pathlib.Path(outputs_dir) / f"{case.id}.safetensors"
    _, _, save_file = _safetensors()
    (pathlib.Path(outputs_dir) / f"{case.id}.error").unlink(missing_ok=True)
    save_file(clean, str(path))
    return path


def write_error(outputs_dir, case, message):
    """OUTPUTS/<id>.error: why the kernel could not run this case (pao diff shows it; the case fails)."""
    (pathlib.Path(outputs_dir) / f"{case.id}.safetensors").unlink(missing_ok=True)
    path = pathlib.Path(outputs_dir) / f"{case.id}.error"
    path.write_text(message.strip() + "\n")
    return path


def find_pao(explicit=None):
    """--pao PATH, else `pao` on the PATH, else the repository's build/release/tools/pao."""
    if explicit:
        return explicit
    on_path = shutil.which("pao")
    if on_path:
        return on_path
    built = REPO / "build" / "release" / "tools" / "pao"
    if built.exists():
        return str(built)
    raise SystemExit("no pao binary: pass --pao PATH, put pao on the PATH, or build it "
                     "(tools/scripts/main.sh builds build/release/tools/pao)")


def run_pao_golden(pao, suite, goldens):
    """`pao golden --suite SUITE --out GOLDENS`, its summary line printed; returns pao's exit status."""
    cmd = [pao, "golden", "--suite", str(suite), "--out", str(goldens)]
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, text=True, capture_output=True)
    summary = [ln for ln in (r.stdout + r.stderr).splitlines() if " cases: " in ln]
    print(summary[-1] if r.returncode == 0 and summary else r.stdout + r.stderr)
    return r.returncode


def num(x):
    """A number of pao's JSON (non-finite ones are the strings "nan", "inf")."""
    return f"{x:.2e}" if isinstance(x, (int, float)) else str(x)


def first_lines(e, n=2):
    """An exception's message, its first n lines joined (a C++ backtrace cut off)."""
    text = str(e).split("\nException raised from")[0].strip()
    return " | ".join(text.splitlines()[:n])


def out_verdict_line(case_report, out_tensor, width):
    """One line of a harness's verdict table: status, case id, max|vendor - exact| / bound and, for a
    FAIL, the failed criteria and pao diff's pattern -- of `out`, or of the tensor pao names the case's
    cause when `out` passes (a written cache)."""
    t = out_tensor
    line = f"{case_report['status']:7} {case_report['case_id']:{width}} {num(t['max_abs_error'])} / {num(t['threshold']['bound'])}"
    if case_report["status"] == "FAIL":
        cause = case_report.get("cause") or {}
        if t.get("status") == "PASS" and cause.get("tensor"):
            line += f"  [out passes; {cause['tensor']}: {cause['pattern']}: {cause['detail']}]"
        else:
            failed = [k["name"] for k in t.get("criteria", []) if not k["passed"]]
            line += f"  [{', '.join(failed)}; {t['pattern']}: {t['pattern_detail']}]"
    return line


def harness_arguments(doc, vendor, suite):
    """The options every vendor harness takes: --goldens, --outputs (out/VENDOR-goldens, out/VENDOR-vendor),
    --suite (examples/cases/SUITE.json), --pao, --no-generate, --cases; a harness adds its own."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--goldens", default=f"out/{vendor}-goldens", help=f"golden folder (default out/{vendor}-goldens)")
    parser.add_argument("--outputs", default=f"out/{vendor}-vendor", help=f"the kernel's outputs (default out/{vendor}-vendor)")
    parser.add_argument("--suite", default=str(REPO / "examples" / "cases" / f"{suite}.json"),
                        help=f"suite for pao golden (default examples/cases/{suite}.json)")
    parser.add_argument("--pao", help="pao binary (default: pao on PATH, else build/release/tools/pao)")
    parser.add_argument("--no-generate", action="store_true", help="use GOLDENS as it is")
    parser.add_argument("--cases", help="run and diff only the case ids matching this glob (the suite is generated whole)")
    parser.add_argument("--device", default="cpu",
                        help="torch device the kernel runs on (cpu, cuda, cuda:1...; default cpu): the golden's inputs "
                             "go there, the outputs come back")
    return parser


def torch_device(name):
    """The torch.device of --device, or SystemExit(2) saying why it cannot be used."""
    import torch
    try:
        device = torch.device(name)
    except RuntimeError as e:
        print(f"error: --device {name}: {e}", file=sys.stderr)
        raise SystemExit(2)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"error: --device {name}: torch {torch.__version__} sees no CUDA device", file=sys.stderr)
        raise SystemExit(2)
    return device


def print_verdicts(report, errors, goldens, outputs, label, header_note="", lines_of=None, counts_note=""):
    """The verdict table of pao diff's JSON report: one line per case (ERROR: the kernel's refusal from
    `errors`; else lines_of(case report, its `out` tensor report, width), by default out_verdict_line),
    then the counts. Returns ({case id: its `out` tensor report}, the ids of the failing cases)."""
    out_tensor = {t["case_id"]: t for t in report["tensors"] if t["name"] == "out"}
    width = max([len(c["case_id"]) for c in report["cases"]] + [10])
    lines_of = lines_of or (lambda c, out, w: [out_verdict_line(c, out, w)])
    print(f"\n{'verdict':7} {'case':{width}} max|{label}-exact| / bound{header_note}")
    counts, failing = {"PASS": 0, "FAIL": 0, "ERROR": 0}, []
    for c in report["cases"]:
        cid = c["case_id"]
        if c.get("error"):
            counts["ERROR"] += 1
            print(f"{'ERROR':7} {cid:{width}} {errors.get(cid, c['error'])}")
            continue
        counts[c["status"]] += 1
        if c["status"] == "FAIL":
            failing.append(cid)
        for line in lines_of(c, out_tensor.get(cid), width):
            print(line)
    print(f"\n{counts['PASS']} pass, {counts['FAIL']} fail, {counts['ERROR']} not run{counts_note} "
          f"(full report: pao diff {goldens} {outputs})")
    return out_tensor, failing


def diff_report(pao, goldens, outputs, cases=None):
    """`pao diff GOLDENS OUTPUTS --json OUTPUTS/report.json --quiet [--cases GLOB]`: (pao's status, the
    report as a dict); the report is None when pao refused the input (status 2)."""
    report = pathlib.Path(outputs) / "report.json"
    extra = ["--json", str(report), "--quiet"] + (["--cases", cases] if cases else [])
    status = run_pao_diff(pao, goldens, outputs, extra).returncode
    return status, (None if status == 2 else json.loads(report.read_text()))


def run_each_case(goldens, outputs, cases, run, refusal, api, vendor):
    """For every golden (matching the glob `cases`), `run(case, tensors)`'s outputs written to OUTPUTS.
    An exception of type `refusal` is the harness saying the case is not expressible in `api`; any
    other is the kernel's (`vendor`) error. Either goes to OUTPUTS/<id>.error. Returns {case id: error}."""
    errors = {}
    for case, tensors in for_each_case(goldens, cases):
        try:
            write_outputs(outputs, case, tensors, run(case, tensors))
        except refusal as e:
            errors[case.id] = f"harness: not expressible in {api}: {e}"
            write_error(outputs, case, errors[case.id])
        except Exception as e:
            errors[case.id] = f"{vendor}: {type(e).__name__}: {first_lines(e)}"
            write_error(outputs, case, errors[case.id])
    return errors


def judge_torch_kernel(args, title, label, run, refusal, api, vendor):
    """A torch harness's run: the goldens (`pao golden`, unless --no-generate), `run(case, tensors, device)`
    on --device for each (run_each_case), `pao diff` and the verdict table. Returns (status, the diff's
    report or None, the device); the status is pao golden's when it failed, else pao diff's."""
    import torch
    device = torch_device(args.device)
    pao = find_pao(args.pao)
    goldens, outputs = pathlib.Path(args.goldens), pathlib.Path(args.outputs)
    if not args.no_generate and (rc := run_pao_golden(pao, args.suite, goldens)) != 0:
        return rc, None, device
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"torch {torch.__version__} {title} on {device}, {where}", flush=True)
    outputs.mkdir(parents=True, exist_ok=True)
    errors = run_each_case(goldens, outputs, args.cases, lambda c, t: run(c, t, device), refusal, api, vendor)
    status, report = diff_report(pao, goldens, outputs, args.cases)
    if report is not None:
        print_verdicts(report, errors, goldens, outputs, label)
    return status, report, device


def run_pao_diff(pao, goldens, outputs, extra=(), capture=False):
    """`pao diff GOLDENS OUTPUTS EXTRA...`; returns the CompletedProcess (returncode = pao's status)."""
    cmd = [pao, "diff", str(goldens), str(outputs), *extra]
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, text=True, capture_output=capture)


# ---------------------------------------------------------------------------------------------
# Evidence: the attention in float64, plain torch, from the golden's inputs. Written apart from
# any vendor's conversion and from pao (the IPEX and OpenVINO harnesses' --evidence): its own gather of the paged cache.
# ---------------------------------------------------------------------------------------------
def gather64(cache, layout, which, blocks, n):
    """Tokens [0, n) of one sequence from a golden cache -> [n, num_kv_heads, head_size] float64."""
    import torch
    return gather(cache.to(torch.float64), layout, which, blocks, n)


def gather(cache, layout, which, blocks, n):
    """Tokens [0, n) of one sequence from a golden cache -> [n, num_kv_heads, head_size], in the cache's
    dtype and on its device. The one place that knows the three layouts."""
    c = cache[blocks]
    if layout == "nhd":
        pass                                   # [nb, block_size, kv_heads, head_size]
    elif layout == "hnd":
        c = c.permute(0, 2, 1, 3)
    elif which == "key":                       # vllm [nb, kv_heads, hs/x, block_size, x]
        c = c.permute(0, 3, 1, 2, 4).flatten(3)
    else:                                      # vllm [nb, kv_heads, head_size, block_size]
        c = c.permute(0, 3, 1, 2)
    return c.reshape(-1, c.shape[2], c.shape[3])[:n]


def integer64(tensors, layout, which, blocks, n, block_size):
    """Tokens [0, n) of an integer cache dequantised in float64: its scale and zero-point tensors
    [num_blocks, kv_heads, rows, cols] read by their shapes alone (rows 1: one per channel of the block;
    cols: groups of head_size / cols dims)."""
    import torch
    codes = gather64(tensors[f"{which}_cache"], layout, which, blocks, n)   # [n, kv_heads, D]
    params = []
    for name in (f"{which}_cache_scale", f"{which}_cache_zero_point"):
        p = tensors[name].to(torch.float64)[blocks]                         # [blocks, kv_heads, rows, cols]
        if p.shape[2] == 1:
            p = p.expand(-1, -1, block_size, -1)
        p = p.permute(0, 2, 1, 3).reshape(-1, p.shape[1], p.shape[3])[:n]  # [n, kv_heads, cols]
        params.append(p.repeat_interleave(codes.shape[2] // p.shape[2], dim=2))
    scale, zero_point = params
    return (codes - zero_point) * scale


def new_kv_from_cache(case):
    """Whether the case's prefix golden reads the new tokens' K/V back from the cache."""
    return case.kernel in PREFILL_KERNELS and case.spec.get("new_kv_source", "input") == "cache"


def reference64(case, tensors, k_scale=None, v_scale=None, window=None, soft_cap=None, alibi=None,
                new_from_cache=None):
    """out [tokens, heads, head_size] in float64. Keyword overrides give the alternative semantics;
    new_from_cache (prefix) defaults to the case's new_kv_source."""
    import torch
    if new_from_cache is None:
        new_from_cache = new_kv_from_cache(case)
    # The metadata's scale, k_scale, v_scale are the f32 values the kernels use, printed as the
    # shortest decimal that round-trips to that f32 ("0.088388346"): round them back to f32 before
    # using them in float64 (read as a double, "0.088388346" is 1.5e-9 away, which large soft-capped
    # logits amplify to 1.3e-9 of the output -- visible next to a float64 reference).
    f32 = lambda x: float(torch.tensor(x, dtype=torch.float32))  # noqa: E731
    kv_heads = case.int("num_kv_heads")
    if k_scale is None:    # per-KV-head scales (a pao extension) replace k_scale / v_scale
        ks = torch.tensor([f32(x) for x in case.spec.get("k_head_scales") or [case.float("k_scale")] * kv_heads],
                          dtype=torch.float64)[:, None]
    else:
        ks = k_scale
    if v_scale is None:
        vs = torch.tensor([f32(x) for x in case.spec.get("v_head_scales") or [case.float("v_scale")] * kv_heads],
                          dtype=torch.float64)[:, None]
    else:
        vs = v_scale
    w = case.int("sliding_window") if window is None else window
    cap = case.float("soft_cap") if soft_cap is None else soft_cap
    use_alibi = case.flag("alibi") if alibi is None else alibi
    scale = f32(case.float("scale"))
    layout, bs = case.meta["kv_layout"], case.int("block_size")
    q_all = tensors["query"].to(torch.float64)
    heads = q_all.shape[1]
    slopes = tensors["alibi_slopes"].to(torch.float64) if use_alibi else None
    seq_lens = tensors["seq_lens"].tolist()
    if case.kernel in PREFILL_KERNELS:
        starts = tensors["query_start_loc"].tolist()
    else:
        starts = list(range(len(seq_lens) + 1))
    out = torch.zeros_like(q_all)
    for s, n in enumerate(seq_lens):
        a, b = starts[s], starts[s + 1]
        if b == a or n == 0:
            continue
        blocks = tensors["block_tables"][s, : (n + bs - 1) // bs].long()
        if "key_cache_scale" in tensors:   # an integer cache: (code - zero point) * scale per group
            k = integer64(tensors, layout, "key", blocks, n, bs)
            v = integer64(tensors, layout, "value", blocks, n, bs)
        else:
            k = gather64(tensors["key_cache"], layout, "key", blocks, n) * ks
            v = gather64(tensors["value_cache"], layout, "value", blocks, n) * vs
        if case.kernel in PREFILL_KERNELS and not new_from_cache:   # new_kv_source "input": vLLM's Triton kernel
            k[n - (b - a):] = tensors["key"][a:b].to(torch.float64)
            v[n - (b - a):] = tensors["value"][a:b].to(torch.float64)
        group = heads // k.shape[1]
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        qpos = torch.arange(n - (b - a), n, dtype=torch.float64)[:, None]
        kpos = torch.arange(n, dtype=torch.float64)[None, :]
        z = scale * torch.einsum("rhd,khd->hrk", q_all[a:b], k)
        if cap > 0:
            z = cap * torch.tanh(z / cap)
        if slopes is not None:
            z = z + slopes[:, None, None] * (kpos - qpos)[None]
        mask = kpos > qpos
        if w > 0:
            mask = mask | (qpos - kpos >= w)
        z = z.masked_fill(mask[None], float("-inf"))
        out[a:b] = torch.einsum("hrk,khd->rhd", torch.softmax(z, dim=-1), v)
    return out


# ---------------------------------------------------------------------------------------------
# >>> REPLACE THIS FUNCTION with a call of your kernel. <<<
#
# case:    Case -- case.kernel, case.meta (strings), case.spec (the parsed case), case.int("block_size"),
#          case.float("k_scale"), case.ints("seq_lens"), case.flag("alibi"), ...
# tensors: the golden's tensors by name -- inputs: query, key_cache, value_cache, block_tables, seq_lens,
#          alibi_slopes (with alibi); prefix also key, value, query_start_loc. reshape_and_cache: key,
#          value ([tokens + padding, kv_heads, head_size]), slot_mapping (i64, -1 for the padding rows),
#          key_cache_before, value_cache_before (copy them: your write goes into the copies), block_tables,
#          seq_lens. write_and_attend: prefix's inputs with key_cache_before / value_cache_before (and an
#          integer cache's key_cache_scale_before, ...) for the caches, plus slot_mapping.
#          (The golden's answers are in there too -- out, out_exact, key_cache, value_cache, ...
#          -- a real kernel must not read them.)
#          Caches are in the golden's kv_layout (case.meta["kv_layout"]: "vllm", "nhd" or "hnd"); ask
#          pao golden for your kernel's own layout if it is one of these, else convert in one place
#          (see to_ipex_cache in vendor_harness_ipex.py). Prefix goldens read the new tokens' K/V from
#          key/value (new_kv_source "input", vLLM's Triton kernel) or back from the cache
#          (new_kv_source "cache", FlashAttention/FlashInfer/IPEX): pick your kernel's in the case.
# return:  {output name: tensor}, in the golden's dtype and shape (see OUTPUT_NAMES; reshape_and_cache:
#          key_cache and value_cache, the whole written pools, fp8 as fp8 or uint8 codes); raise to report
#          that the kernel cannot run the case (the message goes to <id>.error).
# ---------------------------------------------------------------------------------------------
DEMO = False


def run_vendor_kernel(case, tensors):
    if DEMO:
        # Demo only: hand back the golden's own answer, so that pao diff passes. Judges nothing.
        written = {name: tensors[name].clone() for name in OUTPUT_NAMES[case.kernel]
                   if case.kernel in CACHE_WRITERS and name.startswith(("key_cache", "value_cache")) and name in tensors}
        return written if case.kernel == "reshape_and_cache" else {"out": tensors["out"].clone(), **written}
    raise NotImplementedError("run_vendor_kernel is the template's stub: replace it with a call of "
                              "your kernel (or pass --demo to see the plumbing pass)")


def main(argv=None):
    global DEMO
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="after --: options for pao diff (--json FILE, --quiet, ...)")
    parser.add_argument("goldens", help="golden folder (pao golden --out DIR)")
    parser.add_argument("outputs", help="folder for the vendor's outputs (created)")
    parser.add_argument("--pao", help="pao binary (default: pao on PATH, else build/release/tools/pao)")
    parser.add_argument("--demo", action="store_true",
                        help="the stub returns the golden's own out (the diff passes; judges no kernel)")
    parser.add_argument("--cases", help="only the case ids matching this glob (passed to pao diff too)")
    argv = list(sys.argv[1:] if argv is None else argv)
    diff_args = argv[argv.index("--") + 1:] if "--" in argv else []   # after --: pao diff options
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    DEMO = args.demo
    pao = find_pao(args.pao)

    outputs = pathlib.Path(args.outputs)
    # The outputs never go into a golden folder: they would replace the goldens they are judged by.
    if outputs.resolve() == pathlib.Path(args.goldens).resolve() or (outputs / "manifest.json").exists():
        print(f"vendor_harness: error: OUTPUTS {outputs} is a golden folder (it holds manifest.json, or is "
              f"GOLDENS): writing the vendor's outputs there would overwrite the goldens; give another folder",
              file=sys.stderr)
        return 2
    outputs.mkdir(parents=True, exist_ok=True)
    ran = failed = 0
    for case, tensors in for_each_case(args.goldens, args.cases):
        try:
            result = run_vendor_kernel(case, tensors)
            write_outputs(outputs, case, tensors, result)
            ran += 1
        except Exception as e:  # the kernel's refusal is a result: record it, go on
            write_error(outputs, case, f"{type(e).__name__}: {e}")
            failed += 1
    print(f"vendor_harness: {ran} cases run, {failed} raised (their reasons in {outputs}/<id>.error)",
          flush=True)
    extra = diff_args + (["--cases", args.cases] if args.cases else [])
    return run_pao_diff(pao, args.goldens, outputs, extra).returncode


if __name__ == "__main__":
    sys.exit(main())

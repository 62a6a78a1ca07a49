#!/usr/bin/env python3
"""pao judging a real kernel on this CPU: OpenVINO 2026.4.1's PagedAttentionExtension (CPU plugin).

    python examples/vendor_harness_openvino.py [--goldens DIR] [--outputs DIR] [--pao PATH] [--cases GLOB]
                                               [--evidence]

1. `pao golden --suite examples/cases/openvino.json --out GOLDENS` (skipped with --no-generate);
2. for every golden, OpenVINO's op as a one-op model, compiled for the CPU with
   KV_CACHE_PRECISION f32 or f16 (the golden's cache dtype) and INFERENCE_PRECISION_HINT f32:
   - its 28 inputs: q, k, v as [tokens, heads * head_size] f32 (the golden's values, exact in f32);
     key_cache / value_cache, pao's hnd caches as they are ([blocks, kv_heads, 32, head_size] is
     OpenVINO's own CPU layout); past_lens (the context: seq_len - query_len), subsequence_begins
     (query_start_loc), block_indices / block_indices_begins (each sequence's used blocks from
     block_tables), scale, sliding_window, alibi_slopes, max_context_len; the rest empty;
   - the op writes the new tokens into the cache and attends over the cache: prefix goldens hand it
     key / value, decode goldens the new token's K/V read from the cache slot the golden holds it in
     (exact: the caches are unquantised);
   its output goes to OUTPUTS/<id>.safetensors in the golden's dtype (one rounding from f32);
3. `pao diff GOLDENS OUTPUTS --json OUTPUTS/report.json`, then one line per case;
4. with --evidence: every output against reference64 (vendor_harness.py), an fp64 attention in
   plain torch written apart from pao, and the written caches against the golden's slot by slot:
   the new tokens' slots must hold the golden's values, every other token's slot stay untouched;
   slots no token occupies that the op overwrote are listed (not a defect: nothing reads them).

Needs openvino==2026.4.1, torch and safetensors:
    python3 -m venv /tmp/ov && /tmp/ov/bin/pip install openvino==2026.4.1 torch safetensors
    /tmp/ov/bin/python examples/vendor_harness_openvino.py --pao build/dev/tools/pao
Exit status: pao golden's when it fails, else pao diff's (0 all pass, 1 a mismatch, 2 bad input or
openvino missing); 1 also when --evidence disagrees with pao.
"""

import json
import pathlib
import sys

try:        # imported here for the code below; without them, --help still works (main says what is missing)
    import numpy as np
    import openvino as ov
    import torch
    from openvino import opset13 as ops
    from openvino.op import _PagedAttentionExtension
    MISSING = None
except ImportError as e:
    MISSING = e

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from vendor_harness import (find_pao, first_lines, for_each_case, harness_arguments, print_verdicts,  # noqa: E402
                            reference64, run_pao_diff, run_pao_golden, write_error, write_outputs)

OPENVINO_VERSION = "2026.4.1"   # the op's inputs change between releases (13 in 2024.x, 28 in 2026.4)
BLOCK_SIZE = 32                 # the CPU plugin's block size


class NotInOpenVinoApi(Exception):
    """The case asks for something the op cannot express (the harness says so instead of running)."""


def cache_precision(case):
    cache = case.meta["cache_storage_dtype"]
    if case.meta["kv_layout"] != "hnd" or case.int("block_size") != BLOCK_SIZE:
        raise NotInOpenVinoApi(f"the CPU plugin's cache is hnd with blocks of {BLOCK_SIZE} "
                               f"(this golden: {case.meta['kv_layout']}, blocks of {case.int('block_size')})")
    if cache != case.meta["dtype"] or cache not in ("f32", "f16"):
        raise NotInOpenVinoApi(f"a {case.meta['kv_cache_dtype']} cache over {case.meta['dtype']}: the harness runs "
                               "f32 / f16 caches (OpenVINO's u8 / u4 quantiser is not a pao kv_quant rule yet)")
    return cache


def _const(dtype, shape, values=None):
    a = np.zeros(shape, dtype=dtype) if values is None else np.array(values, dtype=dtype).reshape(shape)
    return ops.constant(a)


def compile_op(case, tensors, precision):
    """The one-op model for this case's heads, window and ALiBi, compiled for the CPU."""
    heads, kv_heads, d = case.int("num_heads"), case.int("num_kv_heads"), case.int("head_size")
    f32, i32 = ov.Type.f32, ov.Type.i32
    param = lambda t, shape, name: ops.parameter(shape, t, name=name)  # noqa: E731
    q = param(f32, [-1, heads * d], "q")
    k = param(f32, [-1, kv_heads * d], "k")
    v = param(f32, [-1, kv_heads * d], "v")
    key_cache = param(ov.Type.dynamic, ov.PartialShape.dynamic(), "key_cache")
    value_cache = param(ov.Type.dynamic, ov.PartialShape.dynamic(), "value_cache")
    names = ["past_lens", "subsequence_begins", "block_indices", "block_indices_begins"]
    indices = [param(i32, [-1], n) for n in names]
    scale = param(f32, [], "scale")
    max_context_len = param(i32, [], "max_context_len")
    slopes = tensors["alibi_slopes"].numpy() if case.flag("alibi") else np.zeros([0], np.float32)
    num_seqs = len(case.ints("seq_lens"))
    inputs = [q, k, v, key_cache, value_cache, *indices, scale,
              _const(np.int32, [], [case.int("sliding_window")]),   # 10: 0 = off; else the last W keys
              ops.constant(slopes.astype(np.float32)),               # 11: [num_heads] or empty
              max_context_len,                                       # 12
              _const(np.int32, [num_seqs] if num_seqs > 1 else [0]),  # 13: score_aggregation_window
              _const(np.int32, [0]), _const(np.int32, [0]), _const(np.float32, [0]),  # 14-16: rotation
              _const(np.float32, [0]), _const(np.int32, [], [0]), _const(np.int32, [], [0]),  # 17-19: xattention
              _const(np.float32, [0]),                               # 20: sinks
              _const(np.int32, [], [0]), _const(np.int32, [0]), _const(np.int32, [0]), _const(np.int32, [0]),  # 21-24
              _const(np.int32, [0]), _const(np.uint8, [0]), _const(np.int32, [0])]  # 25-27: token types, qq bias
    op = _PagedAttentionExtension([x.output(0) for x in inputs])
    rt = op.get_rt_info()
    rt["num_k_heads"], rt["k_head_size"], rt["num_v_heads"], rt["v_head_size"] = kv_heads, d, kv_heads, d
    model = ov.Model([op.output(0)], [q, k, v, key_cache, value_cache, *indices, scale, max_context_len], "pa")
    config = {"KV_CACHE_PRECISION": precision, "INFERENCE_PRECISION_HINT": "f32"}
    return ov.Core().compile_model(model, "CPU", config)


def op_inputs(case, tensors):
    """past_lens, subsequence_begins, block_indices, block_indices_begins, q, k, v of a golden."""
    seq_lens = case.ints("seq_lens")
    heads, kv_heads, d = case.int("num_heads"), case.int("num_kv_heads"), case.int("head_size")
    tables = tensors["block_tables"]
    if case.kernel == "prefix":
        starts = tensors["query_start_loc"].tolist()
        k, v = tensors["key"], tensors["value"]
    else:  # decode: one new token per sequence, its K/V in the cache slot of position seq_len - 1
        starts = list(range(len(seq_lens) + 1))
        rows_k, rows_v = [], []
        for s, n in enumerate(seq_lens):
            if n == 0:
                raise NotInOpenVinoApi("an empty decode sequence: the op has no query row without a new token")
            block = int(tables[s, (n - 1) // BLOCK_SIZE])
            rows_k.append(tensors["key_cache"][block, :, (n - 1) % BLOCK_SIZE])
            rows_v.append(tensors["value_cache"][block, :, (n - 1) % BLOCK_SIZE])
        k, v = torch.stack(rows_k), torch.stack(rows_v)
    past = [n - (starts[s + 1] - starts[s]) for s, n in enumerate(seq_lens)]
    blocks, begins = [], [0]
    for s, n in enumerate(seq_lens):
        blocks += tables[s, : (n + BLOCK_SIZE - 1) // BLOCK_SIZE].tolist()
        begins.append(len(blocks))
    flat = lambda t, h: t.to(torch.float32).reshape(t.shape[0], h * d).numpy()  # noqa: E731
    return past, starts, blocks, begins, flat(tensors["query"], heads), flat(k, kv_heads), flat(v, kv_heads)


def run_openvino(case, tensors):
    """(out in the golden's dtype, the key and value caches after the op wrote them)."""
    precision = cache_precision(case)
    compiled = compile_op(case, tensors, precision)
    past, starts, blocks, begins, q, k, v = op_inputs(case, tensors)
    np_dtype = np.float32 if precision == "f32" else np.float16
    # The op writes into these (shared memory): copies of the golden's caches, NaN poison included.
    caches = {name: np.ascontiguousarray(tensors[name].numpy().astype(np_dtype)) for name in ("key_cache", "value_cache")}
    request = compiled.create_infer_request()
    feeds = {"q": q, "k": k, "v": v,
             "past_lens": np.array(past, np.int32), "subsequence_begins": np.array(starts, np.int32),
             "block_indices": np.array(blocks, np.int32), "block_indices_begins": np.array(begins, np.int32),
             "scale": np.array(np.float32(case.float("scale"))),
             "max_context_len": np.array(max(case.ints("seq_lens")), np.int32)}
    for name, value in feeds.items():
        request.set_tensor(name, ov.Tensor(value))
    for name, value in caches.items():
        request.set_tensor(name, ov.Tensor(value, shared_memory=True))
    request.infer()
    out = request.get_output_tensor(0).data.copy()
    shape = tensors["out"].shape
    out = torch.from_numpy(out.reshape(shape)).to(tensors["out"].dtype)
    return out, {name: torch.from_numpy(value) for name, value in caches.items()}


def written_slots(case, tensors):
    """(block, offset) of every slot the op must write: the new tokens' (decode: the last token's)."""
    seq_lens = case.ints("seq_lens")
    starts = tensors["query_start_loc"].tolist() if case.kernel == "prefix" else list(range(len(seq_lens) + 1))
    slots = []
    for s, n in enumerate(seq_lens):
        for pos in range(n - (starts[s + 1] - starts[s]), n):
            slots.append((int(tensors["block_tables"][s, pos // BLOCK_SIZE]), pos % BLOCK_SIZE))
    return slots


def occupied_slots(case, tensors):
    """(block, offset) of every slot a token of some sequence occupies after the call."""
    slots = set()
    for s, n in enumerate(case.ints("seq_lens")):
        for pos in range(n):
            slots.add((int(tensors["block_tables"][s, pos // BLOCK_SIZE]), pos % BLOCK_SIZE))
    return slots


def evidence(case, tensors, out, caches, bound):
    """Lines of the independent checks, and whether one finds a defect pao did not: the output
    against reference64, the written caches against the golden's slot by slot (bits; NaN poison
    included). A slot no token occupies that the op overwrote is reported, not counted: no kernel
    reads it before the token it is reserved for is written there."""
    ref = reference64(case, tensors)
    err = (out.to(torch.float64) - ref).abs().max().item() if out.numel() else 0.0
    lines = [f"  fp64 reference (plain torch): max|openvino - fp64| = {err:.2e} (pao's bound {bound})"]
    occupied, new = occupied_slots(case, tensors), set(written_slots(case, tensors))
    defect = False
    for name, written in caches.items():
        bits = torch.int16 if written.dtype == torch.float16 else torch.int32
        golden = tensors[name].to(written.dtype)
        changed = (written.view(bits) != golden.view(bits)).any(dim=3).any(dim=1)  # [blocks, 32]
        slots = {(b, o) for b, o in changed.nonzero().tolist()}
        wrong = sorted(slots & occupied)
        unused = sorted(slots - occupied)
        text = f"  {name}: the {len(new)} new tokens' slots hold the golden's values"
        if wrong:
            defect = True
            text = f"  {name}: {len(wrong)} slots of tokens differ from the golden (first: block {wrong[0][0]}, slot {wrong[0][1]})"
        if unused:
            blocks = sorted({b for b, _ in unused})
            values = sorted({float(written[b, :, o].abs().max()) for b, o in unused})
            text += (f"; {len(unused)} slots no token occupies were overwritten too (blocks {blocks}, "
                     f"max |value| written {values[-1]:g}: the tail of a sequence's last block)")
        lines.append(text)
    return lines, defect


def main(argv=None):
    parser = harness_arguments(__doc__, "openvino", "openvino")
    parser.add_argument("--evidence", action="store_true",
                        help="every output against an fp64 reference written apart from pao; the written caches "
                             "against the golden's")
    args = parser.parse_args(argv)
    if MISSING is not None:   # bad input (exit 2), not a mismatch (1): said before any golden is written
        print(f"vendor_harness_openvino: error: {MISSING}: this harness needs openvino=={OPENVINO_VERSION}, "
              "torch and safetensors", file=sys.stderr)
        return 2
    if ov.__version__.split("-")[0] != OPENVINO_VERSION:
        print(f"vendor_harness_openvino: error: openvino {ov.__version__}, pinned {OPENVINO_VERSION}: the op's "
              "inputs differ between releases", file=sys.stderr)
        return 2
    pao = find_pao(args.pao)
    goldens, outputs = pathlib.Path(args.goldens), pathlib.Path(args.outputs)
    if not args.no_generate and (rc := run_pao_golden(pao, args.suite, goldens)) != 0:
        return rc
    print(f"openvino {ov.__version__} PagedAttentionExtension on CPU, INFERENCE_PRECISION_HINT f32", flush=True)
    outputs.mkdir(parents=True, exist_ok=True)
    errors, ran = {}, {}
    for case, tensors in for_each_case(goldens, args.cases):
        try:
            out, caches = run_openvino(case, tensors)
            write_outputs(outputs, case, tensors, {"out": out})
            ran[case.id] = (out, caches)
        except NotInOpenVinoApi as e:
            errors[case.id] = f"harness: not expressible in OpenVINO's op: {e}"
            write_error(outputs, case, errors[case.id])
        except Exception as e:
            errors[case.id] = f"OpenVINO: {type(e).__name__}: {first_lines(e)}"
            write_error(outputs, case, errors[case.id])
    report = outputs / "report.json"
    extra = ["--json", str(report), "--quiet"] + (["--cases", args.cases] if args.cases else [])
    status = run_pao_diff(pao, goldens, outputs, extra).returncode
    if status == 2:
        return status
    rep = json.loads(report.read_text())
    out_tensor, _ = print_verdicts(rep, errors, goldens, outputs, "openvino")
    if args.evidence:
        disagree = False
        for case, tensors in for_each_case(goldens, args.cases):
            if case.id not in ran:
                continue
            out, caches = ran[case.id]
            t = out_tensor[case.id]
            print(f"{case.id}: pao {next(c['status'] for c in rep['cases'] if c['case_id'] == case.id)}")
            lines, defect = evidence(case, tensors, out, caches, f"{t['threshold']['bound']:.2e}")
            print("\n".join(lines))
            disagree |= defect
        if disagree and status == 0:
            return 1
    return status


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""pao judging a real kernel on this CPU: OpenVINO 2026.4.1's PagedAttentionExtension (CPU plugin).

    python examples/vendor_harness_openvino.py [--goldens DIR] [--outputs DIR] [--pao PATH] [--cases GLOB]
                                               [--evidence]

1. `pao golden --suite examples/cases/openvino.json --out GOLDENS` (skipped with --no-generate);
2. for every golden, OpenVINO's op as a one-op model, compiled for the CPU with
   KV_CACHE_PRECISION f32, f16, u8 or u4 (the golden's cache dtype; u8 / u4 with KEY_CACHE_QUANT_MODE
   BY_CHANNEL or BY_TOKEN as the golden's key) and INFERENCE_PRECISION_HINT f32 (--inference-precision):
   - its 28 inputs: q, k, v as [tokens, heads * head_size] f32 (the golden's values, exact in f32);
     key_cache / value_cache, pao's hnd caches as they are ([blocks, kv_heads, 32, head_size] is
     OpenVINO's own CPU layout); past_lens (the context: seq_len - query_len), subsequence_begins
     (query_start_loc), block_indices / block_indices_begins (each sequence's used blocks from
     block_tables), scale, sliding_window, alibi_slopes, max_context_len; the rest empty;
   - the op writes the new tokens into the cache and attends over the cache: prefix goldens hand it
     key / value, decode goldens the new token's K/V read from the cache slot the golden holds it in
     (exact: the caches are unquantised);
   its output goes to OUTPUTS/<id>.safetensors in the golden's dtype (one rounding from f32); a
   write_and_attend golden hands it the caches before the call (key_cache_before, ...) and its written
   caches go there too, judged by pao diff bit for bit (an integer cache as OpenVINO's own bytes, which
   pao diff reads in its named layout, pao/layout/openvino_cache.hpp);
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
from vendor_harness import (PREFILL_KERNELS, diff_report, find_pao, first_lines, for_each_case, harness_arguments,  # noqa: E402
                            print_verdicts, reference64, run_pao_golden, write_error, write_outputs)

OPENVINO_VERSION = "2026.4.1"   # the op's inputs change between releases (13 in 2024.x, 28 in 2026.4)
BLOCK_SIZE = 32                 # the CPU plugin's block size


class NotInOpenVinoApi(Exception):
    """The case asks for something the op cannot express (the harness says so instead of running)."""


def cache_precision(case):
    """KV_CACHE_PRECISION and KEY_CACHE_QUANT_MODE for the golden's cache, or NotInOpenVinoApi."""
    cache = case.meta["kv_cache_dtype"]
    if case.meta["kv_layout"] != "hnd" or case.int("block_size") != BLOCK_SIZE:
        raise NotInOpenVinoApi(f"the CPU plugin's cache is hnd with blocks of {BLOCK_SIZE} "
                               f"(this golden: {case.meta['kv_layout']}, blocks of {case.int('block_size')})")
    if cache in ("u8", "u4"):
        q = case.spec["kv_quant"]
        if q["rule"] != "openvino":
            raise NotInOpenVinoApi(f"a {cache} cache quantised by pao's {q['rule']} rule: OpenVINO writes its new "
                                   "tokens with its own quantiser (kv_quant rule \"openvino\")")
        if q["value"] != "by_token" or q["key"] not in ("by_token", "by_channel"):
            raise NotInOpenVinoApi(f"key {q['key']}, value {q['value']}: the harness converts OpenVINO's value by "
                                   "token and key by token or by channel")
        return cache, q["key"].upper()
    storage = case.meta["cache_storage_dtype"]
    if storage != case.meta["dtype"] or storage not in ("f32", "f16"):
        raise NotInOpenVinoApi(f"a {storage} cache over {case.meta['dtype']}: OpenVINO's caches are f32, f16, u8, u4 "
                               "(f32 / f16 holding the activations' values)")
    return storage, None


# ---------------------------------------------------------------------------------------------
# pao's integer caches (codes one per byte, scale and zero point tensors) <-> OpenVINO's bytes
# (docs/golden.md, "Integer KV caches"), per [block, kv head]:
#   by token (value; key with KEY_CACHE_QUANT_MODE BY_TOKEN): 32 rows [f32 scale, f32 zp, codes]
#   by channel (key):                                          f32 scale[D], f32 zp[D], then 32 rows of codes
#   u4 codes two to a byte, element 2i in the high nibble (pao's pack_u4 puts it in the low one)
# ---------------------------------------------------------------------------------------------
def pack_codes(codes, bits):
    """[..., D] codes -> [..., D * bits / 8] bytes in OpenVINO's order."""
    codes = codes.astype(np.uint8)
    return codes if bits == 8 else (codes[..., 0::2] << 4) | codes[..., 1::2]


def unpack_codes(packed, bits):
    if bits == 8:
        return packed
    out = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), np.uint8)
    out[..., 0::2], out[..., 1::2] = packed >> 4, packed & 15
    return out


def to_openvino(codes, scale, zero_point, by_channel, bits):
    """A pao cache [nb, nkv, 32, D] with its params -> OpenVINO's u8 bytes."""
    f32_bytes = lambda a: np.ascontiguousarray(a, np.float32).view(np.uint8)  # noqa: E731
    packed = pack_codes(codes, bits)
    nb, nkv, _, width = packed.shape
    if by_channel:   # params [nb, nkv, 1, D] -> 2 * 4 * D bytes as rows of `width`
        params = np.concatenate([f32_bytes(scale[:, :, 0]), f32_bytes(zero_point[:, :, 0])], axis=-1)
        return np.concatenate([params.reshape(nb, nkv, -1, width), packed], axis=2)
    return np.concatenate([f32_bytes(scale), f32_bytes(zero_point), packed], axis=-1)  # params [nb, nkv, 32, 1]


def from_openvino(cache, d, by_channel, bits):
    """OpenVINO's u8 bytes -> (codes [nb, nkv, 32, D], scale, zero point) as pao lays them out."""
    nb, nkv = cache.shape[:2]
    if by_channel:
        rows = cache.shape[2] - BLOCK_SIZE
        params = np.ascontiguousarray(cache[:, :, :rows]).reshape(nb, nkv, -1).view(np.float32)
        return (unpack_codes(cache[:, :, rows:], bits), params[:, :, None, :d].copy(), params[:, :, None, d:2 * d].copy())
    params = np.ascontiguousarray(cache[..., :8]).view(np.float32)
    return unpack_codes(cache[..., 8:], bits), params[..., :1].copy(), params[..., 1:2].copy()


def dequantised_row(tensors, which, block, slot):
    """(code - zero point) * scale in f32 of one slot of a golden's integer cache: [num_kv_heads, D]."""
    codes = tensors[f"{which}_cache"][block, :, slot].to(torch.float32)
    scale, zero_point = tensors[f"{which}_cache_scale"][block], tensors[f"{which}_cache_zero_point"][block]
    row = 0 if scale.shape[1] == 1 else slot
    return (codes - zero_point[:, row]) * scale[:, row]


def _const(dtype, shape, values=None):
    a = np.zeros(shape, dtype=dtype) if values is None else np.array(values, dtype=dtype).reshape(shape)
    return ops.constant(a)


INFERENCE_PRECISION = "f32"   # --inference-precision: "default" leaves OpenVINO's (bf16 on CPUs with AMX / AVX512-BF16)


def compile_op(case, tensors, precision, key_mode):
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
    config = {"KV_CACHE_PRECISION": precision}
    if INFERENCE_PRECISION != "default":
        config["INFERENCE_PRECISION_HINT"] = INFERENCE_PRECISION
    if key_mode:
        config["KEY_CACHE_QUANT_MODE"] = key_mode
    return ov.Core().compile_model(model, "CPU", config)


def op_inputs(case, tensors):
    """past_lens, subsequence_begins, block_indices, block_indices_begins, q, k, v of a golden."""
    seq_lens = case.ints("seq_lens")
    heads, kv_heads, d = case.int("num_heads"), case.int("num_kv_heads"), case.int("head_size")
    tables = tensors["block_tables"]
    if case.kernel in PREFILL_KERNELS:
        starts = tensors["query_start_loc"].tolist()
        k, v = tensors["key"], tensors["value"]
    else:  # decode: one new token per sequence, its K/V in the cache slot of position seq_len - 1
        starts = list(range(len(seq_lens) + 1))
        rows_k, rows_v = [], []
        for s, n in enumerate(seq_lens):
            if n == 0:
                raise NotInOpenVinoApi("an empty decode sequence: the op has no query row without a new token")
            block, slot = int(tables[s, (n - 1) // BLOCK_SIZE]), (n - 1) % BLOCK_SIZE
            if "key_cache_scale" in tensors:   # an integer cache: the token's dequantised values (f32)
                rows_k.append(dequantised_row(tensors, "key", block, slot))
                rows_v.append(dequantised_row(tensors, "value", block, slot))
            else:
                rows_k.append(tensors["key_cache"][block, :, slot])
                rows_v.append(tensors["value_cache"][block, :, slot])
        k, v = torch.stack(rows_k), torch.stack(rows_v)
    past = [n - (starts[s + 1] - starts[s]) for s, n in enumerate(seq_lens)]
    blocks, begins = [], [0]
    for s, n in enumerate(seq_lens):
        blocks += tables[s, : (n + BLOCK_SIZE - 1) // BLOCK_SIZE].tolist()
        begins.append(len(blocks))
    flat = lambda t, h: t.to(torch.float32).reshape(t.shape[0], h * d).numpy()  # noqa: E731
    return past, starts, blocks, begins, flat(tensors["query"], heads), flat(k, kv_heads), flat(v, kv_heads)


def run_openvino(case, tensors):
    """(out in the golden's dtype, the caches after the op wrote them in pao's terms: {name: tensor},
    an integer cache's codes with key_cache_scale ... value_cache_zero_point, and the integer caches
    as OpenVINO's own bytes {key_cache, value_cache} -- None for other caches)."""
    precision, key_mode = cache_precision(case)
    compiled = compile_op(case, tensors, precision, key_mode)
    past, starts, blocks, begins, q, k, v = op_inputs(case, tensors)
    bits = {"u8": 8, "u4": 4}.get(precision)
    # The op writes into these (shared memory): the golden's caches, NaN poison included, converted. A
    # write_and_attend golden holds them before the write (key_cache_before, ...); a prefix golden's
    # hold the new tokens already, in the slots the op writes them to again.
    before = "_before" if case.kernel == "write_and_attend" else ""
    if bits:
        caches = {f"{w}_cache": to_openvino(tensors[f"{w}_cache{before}"].numpy(),
                                            tensors[f"{w}_cache_scale{before}"].numpy(),
                                            tensors[f"{w}_cache_zero_point{before}"].numpy(),
                                            w == "key" and key_mode == "BY_CHANNEL", bits)
                  for w in ("key", "value")}
        for name, value in caches.items():
            # The op's cache shape counts elements of its type: u4 rows of D/2 bytes hold D elements.
            want = [int(x.get_length()) for x in list(compiled.input(name).get_partial_shape())[1:]]
            have = list(value.shape[1:-1]) + [value.shape[-1] * 8 // bits]
            if have != want:
                raise NotInOpenVinoApi(f"{name}: OpenVINO's {precision} cache here is [blocks, {want}], the harness "
                                       f"converts to [blocks, {have}]")
    else:
        np_dtype = np.float32 if precision == "f32" else np.float16
        caches = {name: np.ascontiguousarray(tensors[name + before].numpy().astype(np_dtype))
                  for name in ("key_cache", "value_cache")}
    request = compiled.create_infer_request()
    feeds = {"q": q, "k": k, "v": v,
             "past_lens": np.array(past, np.int32), "subsequence_begins": np.array(starts, np.int32),
             "block_indices": np.array(blocks, np.int32), "block_indices_begins": np.array(begins, np.int32),
             "scale": np.array(np.float32(case.float("scale"))),
             "max_context_len": np.array(max(case.ints("seq_lens")), np.int32)}
    for name, value in feeds.items():
        request.set_tensor(name, ov.Tensor(value))
    op_caches = {}
    for name, value in caches.items():
        if bits == 4:   # an ov.Tensor of u4 elements over the packed bytes
            t = ov.Tensor(ov.Type.u4, [value.shape[0], *value.shape[1:-1], value.shape[-1] * 2])
            t.data.reshape(-1)[:] = value.reshape(-1)
        else:
            t = ov.Tensor(value, shared_memory=True)
        op_caches[name] = t
        request.set_tensor(name, t)
    request.infer()
    if bits == 4:   # the bytes the op wrote
        for name, t in op_caches.items():
            caches[name] = np.ascontiguousarray(t.data).reshape(caches[name].shape).copy()
    out = request.get_output_tensor(0).data.copy()
    shape = tensors["out"].shape
    out = torch.from_numpy(out.reshape(shape)).to(tensors["out"].dtype)
    if not bits:
        return out, {name: torch.from_numpy(value) for name, value in caches.items()}, None
    written = {}
    for w in ("key", "value"):
        codes, scale, zero_point = from_openvino(caches[f"{w}_cache"], case.int("head_size"),
                                                 w == "key" and key_mode == "BY_CHANNEL", bits)
        written[f"{w}_cache"] = torch.from_numpy(codes)
        written[f"{w}_cache_scale"] = torch.from_numpy(scale)
        written[f"{w}_cache_zero_point"] = torch.from_numpy(zero_point)
    return out, written, {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in caches.items()}


def written_slots(case, tensors):
    """(block, offset) of every slot the op must write: the new tokens' (decode: the last token's)."""
    seq_lens = case.ints("seq_lens")
    starts = tensors["query_start_loc"].tolist() if case.kernel in PREFILL_KERNELS else list(range(len(seq_lens) + 1))
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


def changed_slots(written, golden):
    """(block, slot) whose stored bits differ: a cache [nb, kv_heads, 32, D] slot by slot; a param tensor
    [nb, kv_heads, rows, cols] by token (rows 32) or, by channel (rows 1), every slot of its block."""
    bits = {torch.float32: torch.int32, torch.float16: torch.int16}.get(written.dtype, written.dtype)
    diff = written.view(bits) != golden.to(written.dtype).view(bits)
    if diff.shape[2] == 1:
        return {(b, o) for b in diff.any(dim=3).any(dim=2).any(dim=1).nonzero().flatten().tolist()
                for o in range(BLOCK_SIZE)}
    return {(b, o) for b, o in diff.any(dim=3).any(dim=1).nonzero().tolist()}


def evidence(case, tensors, out, caches, bound):
    """Lines of the independent checks, and whether one finds a defect pao did not: the output
    against reference64, the written caches (and an integer cache's scales and zero points) against the
    golden's slot by slot, as bits (NaN poison included). Not counted, but listed: slots no token
    occupies that the op overwrote (nothing reads them before their token is written), and where the
    op requantises by design -- a decode token handed over dequantised, a by-channel key block that
    held older tokens (OpenVINO recomputes its scales over every token now in it)."""
    ref = reference64(case, tensors)
    err = (out.to(torch.float64) - ref).abs().max().item() if out.numel() else 0.0
    lines = [f"  fp64 reference (plain torch): max|openvino - fp64| = {err:.2e} (pao's bound {bound})"]
    occupied, new = occupied_slots(case, tensors), set(written_slots(case, tensors))
    integer = "key_cache_scale" in caches
    by_channel = integer and case.spec["kv_quant"]["key"] == "by_channel"
    new_blocks_with_past = {b for b, _ in new} & {b for b, o in occupied - new}
    defect = False
    for which in ("key", "value"):
        names = [f"{which}_cache"] + ([f"{which}_cache_scale", f"{which}_cache_zero_point"] if integer else [])
        slots = set().union(*(changed_slots(caches[n], tensors[n]) for n in names))
        expected = set()
        if integer and case.kernel == "decode":
            expected |= new
        if which == "key" and by_channel:
            expected |= {(b, o) for b, o in occupied if b in new_blocks_with_past}
        wrong = sorted((slots & occupied) - expected)
        requantised = sorted(slots & expected)
        unused = sorted(slots - occupied)
        what = " with their scales and zero points" if integer else ""
        text = f"  {which}: {len(new - slots)} of the {len(new)} new tokens' slots hold the golden's values{what}"
        if wrong:
            defect = True
            text = (f"  {which}: {len(wrong)} slots of tokens differ from the golden{what} (first: block {wrong[0][0]}, "
                    f"slot {wrong[0][1]})")
        if requantised:
            text += (f"; {len(requantised)} slots requantised by the op, as it does by design (not compared: "
                     + ("a decode token handed over dequantised" if integer and case.kernel == "decode" else "")
                     + (", " if integer and case.kernel == "decode" and which == "key" and by_channel else "")
                     + ("its by-channel blocks holding older tokens" if which == "key" and by_channel else "") + ")")
        if unused:
            blocks = sorted({b for b, _ in unused})
            text += f"; {len(unused)} slots no token occupies were overwritten too (blocks {blocks}: the tail of a sequence's last block)"
        lines.append(text)
    return lines, defect


def main(argv=None):
    parser = harness_arguments(__doc__, "openvino", "openvino")
    parser.add_argument("--evidence", action="store_true",
                        help="every output against an fp64 reference written apart from pao; the written caches "
                             "against the golden's")
    parser.add_argument("--inference-precision", choices=("f32", "default"), default="f32",
                        help="INFERENCE_PRECISION_HINT: f32 (default), or OpenVINO's own default (bf16 arithmetic "
                             "on CPUs with AMX or AVX512-BF16)")
    args = parser.parse_args(argv)
    global INFERENCE_PRECISION
    INFERENCE_PRECISION = args.inference_precision
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
    print(f"openvino {ov.__version__} PagedAttentionExtension on CPU, INFERENCE_PRECISION_HINT "
          f"{INFERENCE_PRECISION if INFERENCE_PRECISION != 'default' else 'not set (OpenVINO chooses)'}", flush=True)
    outputs.mkdir(parents=True, exist_ok=True)
    errors, ran = {}, {}
    for case, tensors in for_each_case(goldens, args.cases):
        try:
            out, caches, raw = run_openvino(case, tensors)
            # A write_and_attend golden judges the written caches too (bit for bit); a prefix or decode
            # golden, the attention only (--evidence compares the caches for those). An integer cache
            # goes over as OpenVINO's own bytes, which pao diff reads as codes, scales and zero points
            # (pao/layout/openvino_cache.hpp; --evidence converts them apart, with from_openvino).
            written = {} if case.kernel != "write_and_attend" else raw or caches
            write_outputs(outputs, case, tensors, {"out": out, **written}, as_is=tuple(raw or ()))
            ran[case.id] = (out, caches)
        except NotInOpenVinoApi as e:
            errors[case.id] = f"harness: not expressible in OpenVINO's op: {e}"
            write_error(outputs, case, errors[case.id])
        except Exception as e:
            # OpenVINO's messages open with a chain of "Exception from <file>:<line>:" lines: skip them.
            said = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.startswith("Exception from")]
            errors[case.id] = f"OpenVINO: {type(e).__name__}: {' | '.join(said[:2]) or first_lines(e)}"
            write_error(outputs, case, errors[case.id])
    status, rep = diff_report(pao, goldens, outputs, args.cases)
    if rep is None:
        return status
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

"""pao — Paged Attention Oracle, from Python (docs/python.md).

- :mod:`pao.ops`: vLLM's ``_custom_ops`` attention ops on the CPU (paged_attention_v1/v2,
  reshape_and_cache, context_attention_fwd), computed by the oracle, outputs written in place;
- :mod:`pao.cases`: cases and golden files, as ``pao golden`` makes them;
- :func:`pao.diff`: ``pao diff``'s located verdict on a vendor's outputs;
- :mod:`pao.testing`: ``assert_paged_attention_close`` for pytest;
- :mod:`pao.sim`: the timing simulator.

Errors raise :class:`pao.Error` (a ValueError) with the C++ message: the tensor, the index, the rule.
"""
from . import _pao
from ._pao import Error, data_dir
from ._diff import Report, diff
from . import cases, ops, sim, testing

__version__ = _pao.version
__all__ = ["Error", "Report", "cases", "data_dir", "diff", "ops", "sim", "testing", "__version__"]

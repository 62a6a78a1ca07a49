"""pytest-friendly assertions whose failure message is pao's located report."""
from __future__ import annotations

import os
import tempfile
from typing import Any

from ._diff import diff
from .cases import CaseLike, write_golden


def assert_paged_attention_close(actual: dict[str, Any] | Any, expected: CaseLike | str | os.PathLike,
                                 policy: str | list[str] | None = None, *, reduce: bool = False) -> None:
    """Like ``torch.testing.assert_close``, judged by ``pao diff``'s rule against the exact answer.

    ``actual``: the vendor's outputs, a dict (``{"out": ...}``, V2's ``tmp_out`` / ``max_logits`` /
    ``exp_sums`` too) or one tensor (``out``). ``expected``: a golden file, or a case (dict, JSON
    text or case file) whose golden is made on the fly. Raises AssertionError with the report.
    """
    outputs = actual if isinstance(actual, dict) else {"out": actual}
    is_path = isinstance(expected, (str, os.PathLike)) and not str(expected).lstrip().startswith("{")
    is_golden = is_path and (str(expected).endswith(".safetensors") or os.path.isdir(expected))
    with tempfile.TemporaryDirectory(prefix="pao-assert-") as tmp:
        golden = expected if is_golden else write_golden(expected, tmp)
        report = diff(golden, outputs, policy, reduce=reduce)
    if not report.passed:
        raise AssertionError("pao diff: the outputs do not match the oracle\n" + report.text)

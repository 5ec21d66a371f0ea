"""Issue 5's two shape sets, the one definition bench/ab_compare.py and bench/fit_plan.py share.

The target (docs/perf-log.md, issue 5) is a geometric mean >= 1.00x cuBLASLt over
  - 'squares': the square shapes M = N = K >= 2048, and
  - 'llm': the LLM projection shapes with M >= 1024;
every other shape of `tma-bench gemm` is 'small'.
"""


def issue_set(m, n, k, family=None):
    """'squares', 'llm' or 'small' for an m x n x k product (family: tma-bench's 'square' or
    'llm', when known; otherwise a shape is square when m == n == k)."""
    square = family == "square" if family is not None else m == n == k
    if square:
        return "squares" if m >= 2048 else "small"
    return "llm" if m >= 1024 else "small"

"""One row judged alone, by its own α with no page to adjust over: the tests' shorthand for a
published row declaring one run and the margin of its unit below."""

from __future__ import annotations

import math
from collections.abc import Sequence

from isotropy.verdicts import tolerances as T

# δ by unit: as config/published_values.csv declares it (I(W): its odds within a factor 2)
MARGINS = {
    "correlation": "z:0.1",
    "correlation ×100": "z:0.03",
    "dimensions": "relative:0.1",
    "ratio (1 = isotropic)": "logit:0.6931",
}


def judge_one(
    spec: str,
    ours: float,
    paper: float = math.nan,
    *,
    precision: float = math.nan,
    our_n: float = math.nan,
    paper_n: float = math.nan,
    our_k: float = math.nan,
    per_seed: Sequence[float] = (),
    seed_free: bool = False,
    scale: float = 1.0,
) -> tuple[str, str]:
    """(verdict, the rule as applied) of ``ours`` against ``paper`` by ``spec``."""
    measured = dict(value=ours, per_seed=per_seed)
    kind, argument = T.parse_tolerance(spec)
    if kind not in T.EQUIVALENCE_RULES:
        return T.judge(spec, measured, paper)
    unit = {"lid": "dimensions", "iw_factor": "ratio (1 = isotropic)"}.get(
        kind, "correlation ×100" if scale == 100 else "correlation"
    )
    measured.update(seed_free=seed_free, n=our_n, k=our_k)
    half = precision / 2 if math.isfinite(precision) else 0.0
    declared = T.Declared(margin=MARGINS[unit], half=half)
    judged = T.judge_equivalence(
        kind, measured, paper, declared, unit=unit, paper_n=paper_n, paper_k=argument
    )
    if judged.test is None:  # no test left: its verdict is final
        return str(judged.verdict), judged.text
    return judged.verdict or T.settle(judged.test.p_agree, judged.test.p_differ), judged.text

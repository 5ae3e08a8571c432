"""The opening page of the HTML report (``make report``): the run, its claims and its comparison
with the papers' printed numbers, as compact tables, before any figure or the rule graph.

Snakemake's report shows the workflow description (``report/workflow.rst``) on its first page;
that description inserts the HTML written here (results/report/overview.html, rule
report_overview). The full tables stay in the report's "claims and paper comparison" category.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import pandas as pd

CLAIM_COLUMNS = {
    "verdict": "verdict",
    "statement": "claim",
    "setup": "setup",
    "measured": "measured",
    "threshold": "threshold",
    "paper": "paper",
}
COMPARISON_COLUMNS = {
    "verdict": "verdict",
    "source": "paper",
    "quantity": "quantity",
    "setup": "setup",
    "paper_value": "paper",
    "our_value": "ours",
    "tolerance": "tolerance",
}
VERDICT_ORDER = (
    "not supported", "not consistent", "differs", "inconsistent across seeds", "inconclusive",
    "not comparable", "1 seed: not judged", "supported", "consistent", "agrees",
)  # fmt: skip


def _counts(verdicts: pd.Series) -> str:
    counts = verdicts.fillna("").value_counts()
    ordered = sorted(counts.items(), key=lambda kv: (VERDICT_ORDER + (kv[0],)).index(kv[0]))
    return ", ".join(f"{n} {html.escape(str(v) or 'no verdict')}" for v, n in ordered)


def _table(frame: pd.DataFrame, columns: Mapping[str, str], css: str) -> str:
    present = {k: v for k, v in columns.items() if k in frame}
    shown = frame[list(present)].rename(columns=present)
    for column in shown:
        if pd.api.types.is_float_dtype(shown[column]):
            shown[column] = shown[column].map(lambda x: "" if pd.isna(x) else f"{x:.4g}")
    return shown.to_html(index=False, na_rep="", classes=css, border=0, escape=True)


def overview_html(
    claims: pd.DataFrame,
    comparison: pd.DataFrame,
    *,
    studies: Sequence[str],
    seeds: Mapping[str, Sequence[int]],
    stand_ins: Mapping[str, str],
) -> str:
    """The first page: what ran, then every claim and every paper number with its verdict."""
    tried = claims[claims["verdict"] != "not run"] if "verdict" in claims else claims
    parts = [
        '<div class="isotropy-overview">',
        "<h2>This run</h2>",
        "<p>Studies: "
        + html.escape(", ".join(studies) or "none")
        + ". Seeds: "
        + html.escape("; ".join(f"{s} {', '.join(map(str, v))}" for s, v in seeds.items()) or "-")
        + ".</p>",
    ]
    named = [text for key, text in stand_ins.items() if text and key != "word_vectors_label"]
    if named:
        parts.append("<p>Stand-ins: " + html.escape("; ".join(named)) + ".</p>")
    parts += [
        "<h2>Claims check</h2>",
        f"<p>{len(claims)} checks: {_counts(claims['verdict'])}. "
        "Full table with evidence and notes: <code>results/claims.csv</code> "
        "(category <em>claims and paper comparison</em>).</p>",
        _table(tried, CLAIM_COLUMNS, "overview-claims"),
        "<h2>Paper comparison</h2>",
        f"<p>{len(comparison)} numbers: {_counts(comparison['verdict'])}. "
        "Conventions, stand-ins and notes: <code>results/paper_comparison.csv</code>.</p>",
        _table(comparison, COMPARISON_COLUMNS, "overview-comparison"),
        "<p>Figures and tables of each study are in the menu; the rule graph follows below.</p>",
        "</div>",
    ]
    return "\n".join(parts) + "\n"

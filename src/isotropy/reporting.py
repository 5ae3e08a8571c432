"""The opening page of the HTML report (rule report_overview)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from isotropy import paths
from isotropy.intake import read_effective_config
from isotropy.statistics import (
    AGREES,
    CONSISTENT,
    DIFFERS,
    INCONCLUSIVE,
    INCONSISTENT_SEEDS,
    NOT_COMPARABLE,
    NOT_CONSISTENT,
    NOT_RUN,
    NOT_SUPPORTED,
    ONE_SEED,
    STAND_IN,
    STATED,
    SUPPORTED,
)

# Each header one meaning on the whole page: "paper" names a paper, "paper's value" its number.
CLAIM_COLUMNS = {
    "verdict": "verdict",
    "statement": "claim",
    "setup": "setup",
    "measured": "measured",
    "threshold": "threshold",
    "paper": "stated in",
}
COMPARISON_COLUMNS = {
    "verdict": "verdict",
    "source": "printed in",
    "quantity": "quantity",
    "setup": "setup",
    "paper_value": "paper's value",
    "our_value": "our value",
    "tolerance": "rule",
    "stand_in": "stand-in",
}
# A rule's short name, by what its text says, linked to its definition (the whole text on hover).
RULES = (
    ("exact", "count"),
    ("protocol", "protocol"),
    ("baseline", "learning guard"),
    ("every one of", "every run"),
    ("lid", "LID"),
    ("i(w)", "I(W)"),
    ("not judged", "not judged"),
)
RULES_DEFINED = "docs/verdicts.md#the-rules"
KEY = ["setup", "quantity"]  # a paper number's row in the committed run's table
REASON_COLUMNS = {
    "verdict": "verdict",
    "paper": "paper",
    "source": "printed in",
    "setup": "setup",
    "reason": "reason",
}
# The summary's groups of verdicts; any other verdict but LEFT_OUT is "not judged".
SUMMARY_GROUPS = {
    "replicated": (SUPPORTED, CONSISTENT, AGREES),
    "not replicated": (NOT_SUPPORTED, NOT_CONSISTENT, DIFFERS, INCONSISTENT_SEEDS),
    "stand-in": (STAND_IN,),
}
VERDICT_ORDER = (  # a page's counts: failures first
    *SUMMARY_GROUPS["not replicated"],
    INCONCLUSIVE,
    NOT_COMPARABLE,
    ONE_SEED,
    *SUMMARY_GROUPS["replicated"],
)
LEFT_OUT = (NOT_RUN, STATED)  # counted apart, each its own group
GROUP_ORDER = ("replicated", "exact counts", "not replicated", "not judged", "stand-in", *LEFT_OUT)
STATISTICS = {"pearson_r": "Pearson r", "spearman_rho": "Spearman ρ"}


def _counts(verdicts: pd.Series) -> str:
    """Each verdict with its count after it: "1 seed: not judged (9)"."""
    counts = verdicts.fillna("").value_counts()
    ordered = sorted(counts.items(), key=lambda kv: (VERDICT_ORDER + (kv[0],)).index(kv[0]))
    return ", ".join(f"{html.escape(str(v) or 'no verdict')} ({n})" for v, n in ordered)


def counted(verdicts: pd.Series, what: str) -> str:
    """ "3 checks: supported (2), not run (1)": every verdict, so the parts add up to the whole."""
    return f"{len(verdicts)} {what}: {_counts(verdicts)}"


def _cell(value: object) -> str:
    """A whole number in full, any other to 4 significant digits."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    if pd.isna(number):
        return ""
    return f"{number:.0f}" if number.is_integer() and abs(number) < 1e15 else f"{number:.4g}"


def rule_link(tolerance: object) -> str:
    """A row's rule as HTML: its short name linked to the rules' definitions, its whole text
    (the rule as applied) on hover; an equivalence band by default, nothing for none."""
    text = "" if pd.isna(tolerance) else str(tolerance)
    name = next((n for key, n in RULES if key in text.lower()), "equivalence")
    title = html.escape(text, quote=True)
    return f'<a href="{RULES_DEFINED}" title="{title}">{name}</a>' if text else ""


def _table(frame: pd.DataFrame, css: str, columns: Mapping[str, str]) -> str:
    """``frame``'s ``columns`` as HTML, renamed, numbers by :func:`_cell`, each text escaped
    but a ``tolerance``'s, shown by :func:`rule_link`."""
    present = {k: v for k, v in columns.items() if k in frame}
    # Markdown's code marks go; renamed last
    shown = frame[list(present)].replace("`", "", regex=True)
    shown = shown.apply(
        lambda c: c.map(lambda v: html.escape(v, quote=False) if isinstance(v, str) else v)
    )
    if "tolerance" in shown:
        shown["tolerance"] = frame["tolerance"].map(rule_link)
    return shown.rename(columns=present).to_html(
        index=False, na_rep="", classes=css, border=0, escape=False, float_format=_cell
    )


def _grouped(rows: Iterable[tuple[str, str, bool]]) -> dict[str, list[str]]:
    """The label of each (verdict, label, exact) under its verdict's group; a replicated exact
    count is an "exact count", apart."""
    groups: dict[str, list[str]] = {g: [] for g in GROUP_ORDER}
    for verdict, label, exact in rows:
        group = next((g for g, m in SUMMARY_GROUPS.items() if verdict in m), "not judged")
        group = verdict if verdict in LEFT_OUT else group
        groups["exact counts" if exact and group == "replicated" else group].append(label)
    return groups


def _stand_in(row: Mapping) -> str:
    """ " (on a stand-in)" for a row whose ``stand_in`` names one."""
    named = row.get("stand_in")
    return " (on a stand-in)" if pd.notna(named) and str(named).strip() else ""


def _named(labels: Sequence[str], most: int = 4) -> str:
    shown = ", ".join(labels[:most])
    return shown + (f" and {len(labels) - most} more" if len(labels) > most else "")


def _rows(
    comparison: pd.DataFrame, claims: pd.DataFrame | None = None
) -> list[tuple[str, str, bool]]:
    """(verdict, label, an exact count?) of each paper number, then of each claim, a claim on
    a setup the comparison runs on a stand-in marked so (claims.csv has no stand-in column)."""
    named = comparison.get("stand_in", pd.Series("", comparison.index)).fillna("").astype(str)
    on = set(comparison["setup"][(named.str.strip() != "") | (comparison["verdict"] == STAND_IN)])
    return [
        (
            str(r.get("verdict")),
            f"{STATISTICS.get(r.get('quantity'), r.get('quantity'))} on {r.get('setup')}"
            + _stand_in(r),
            r.get("tolerance") == "exact",
        )
        for r in comparison.to_dict("records")
    ] + [
        (
            str(r.get("verdict")),
            f"{r.get('statement')} ({r.get('setup')})".replace("`", "")
            + (" (on a stand-in)" if _stand_in(r) or r.get("setup") in on else ""),
            False,
        )
        for r in ([] if claims is None else claims.to_dict("records"))
    ]


def summary_html(
    claims: pd.DataFrame, comparison: pd.DataFrame, committed: pd.DataFrame, mark: str = ""
) -> str:
    """The page's first lines: what replicated in this run, then the §3.2 correlations beside
    those of the ``committed`` protocol run (column ``run``: what made them)."""
    groups = _grouped(_rows(comparison, claims))
    always = ("replicated", "not replicated")  # every count of the rows, each rows' group once
    counts = "; ".join(f"{g}: {len(v)}" for g, v in groups.items() if v or g in always)
    failed = groups["not replicated"]
    parts = [
        f"<h2>Summary{mark}</h2>",
        f'<p class="overview-summary"><strong>This run{mark}</strong>, {len(comparison)} paper '
        f"numbers and {len(claims)} claims: {counts}"
        + (f". Not replicated: {html.escape(_named(failed))}" if failed else "")
        + ".</p>",
    ]
    if len(committed):
        mine = comparison.drop_duplicates(["setup", "quantity"]).set_index(["setup", "quantity"])
        side = pd.DataFrame(
            {
                "setup": committed["setup"],
                "statistic": committed["quantity"].map(STATISTICS),
                "paper's value": committed["paper_value"].map(_cell),
                f"this run{mark}": [
                    f"{_cell(mine.at[key, 'our_value'])}: {mine.at[key, 'verdict']}"
                    if key in mine.index
                    else NOT_RUN
                    for key in zip(committed["setup"], committed["quantity"])
                ],
                "the committed protocol run": [
                    f"{_cell(v)}: {verdict}"
                    for v, verdict in zip(committed["our_value"], committed["verdict"])
                ],
            }
        )
        judged = _grouped(_rows(committed))
        said = "; ".join(f"{g}: {_named(v) or 'none'}" for g, v in judged.items() if v)
        parts += [
            f"<p>§3.2 of Mickus et al. (2024), the correlation of IsoScore with the silhouette, "
            f"judged on {html.escape(str(committed['run'].iloc[0]))}: {html.escape(said)}. "
            "Beside it, this run's own values and verdicts:</p>",
            side.to_html(index=False, classes="overview-committed", border=0, escape=True),
        ]
    return "\n".join(parts)


def forest_html(
    png: bytes,
    caption: str,
    comparison: pd.DataFrame,
    *,
    undrawn: pd.DataFrame,
    listed: pd.DataFrame,
    mark: str = "",
) -> str:
    """The forest plot (``png``) with its caption, then the rows it does not draw."""
    image = base64.b64encode(png).decode("ascii")
    counts = comparison["verdict"].value_counts()
    parts = [
        f"<h2>Our numbers against the papers'{mark}</h2>",
        '<figure class="overview-forest" style="margin: 0 0 1rem 0">',
        f'<img src="data:image/png;base64,{image}" style="width: 100%; height: auto" '
        'alt="Forest plot: D = paper − ours with its 95% interval against each row\'s margin">',
        f"<figcaption>{html.escape(caption)}</figcaption>",
        "</figure>",
        f"<h3>Judged, with no band to draw{mark}</h3>",
        f"<p>{len(undrawn)} rows: a bound or a direction, or an undefined value.</p>",
        _table(undrawn, "overview-forest-undrawn", REASON_COLUMNS) if len(undrawn) else "",
        f"<h3>Measured, not judged{mark}</h3>",
        f"<p>{len(listed)} rows: {_counts(listed['verdict']) or 'none'}.</p>",
        _table(listed, "overview-forest-listed", REASON_COLUMNS) if len(listed) else "",
        f"<p>Not drawn either: {counts.get(NOT_RUN, 0)} printed numbers this run does not "
        f"produce (not run) and {counts.get(STATED, 0)} stated beside ours; every row is in "
        "the paper comparison's file (below).</p>",
    ]
    return "\n".join(part for part in parts if part)


def configuration_line(config: Mapping, page: str) -> str:
    """The effective configuration, named by the sha256 of its canonical JSON."""
    text = json.dumps(config, sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"the effective configuration (sha256 {digest}…), in full in {page}.provenance.json"


def recorded_files(config: Mapping, target: str, folder=paths.EFFECTIVE_CONFIG) -> str:
    """The files named by the effective configuration (``<folder>/<target>.yaml`` first) that
    holds ``config`` but its ``studies`` (``make report`` sets them); "" when none does."""
    want = _canonical(config)
    for path in sorted(Path(folder).glob("*.yaml"), key=lambda p: (p.stem != target, p.name)):
        made, settings = read_effective_config(folder, path.name)
        if made and _canonical(settings) == want:
            return made
    return ""


def _canonical(config: Mapping) -> str:
    rest = {key: value for key, value in config.items() if key != "studies"}
    return json.dumps(rest, sort_keys=True, default=str)


def run_line(studies: Sequence[str], preview: str, configfiles: Sequence[str]) -> str:
    """The run's target and configuration files."""
    if preview:
        folder = paths.study_file("", "preview")
        target = f"preview_study (make preview): the main study's setups, {folder}"
    elif list(studies) == ["main"]:
        target = f"main_study (make run): the main study, {paths.study_file('', 'main')}"
    else:
        target = "all: the studies " + ", ".join(studies)
    files = ", ".join(configfiles) or "the defaults (config.yaml)"
    return f"Target: {target}. Configuration: {files}."


def overview_html(
    claims: pd.DataFrame,
    comparison: pd.DataFrame,
    *,
    studies: Sequence[str],
    seeds: Mapping[str, Sequence[int]],
    stand_ins: Mapping[str, str],
    configfiles: Sequence[str] = (),
    made_with: str = "",
    preview: str = "",
    forest: str = "",
    committed: pd.DataFrame | None = None,
    above: Collection[Hashable] = (),
) -> str:
    """The first page: the summary, the ``forest`` plot, the run, every claim and paper number
    once (none listed ``above``, beside the committed run, or not run)."""
    tried = claims[claims["verdict"] != NOT_RUN]
    mark = preview_mark(preview)
    claims_file = paths.PREVIEW_CLAIMS if preview else paths.CLAIMS
    comparison_file = paths.PREVIEW_PAPER_COMPARISON if preview else paths.PAPER_COMPARISON
    committed = pd.DataFrame() if committed is None else committed
    summary = summary_html(claims, comparison, committed, mark)
    named_by = f"Configuration: {html.escape(made_with)}." if made_with else ""  # recorded_files
    parts = ['<div class="isotropy-overview">']
    parts += [f'<p class="overview-configuration">{named_by}</p>'] if made_with else []
    parts += [summary, forest, f"<h2>This run{mark}</h2>"]
    if preview:
        parts.append(f'<p class="overview-preview"><strong>{html.escape(preview)}</strong></p>')
    seeds_run = "; ".join(f"{s} {', '.join(map(str, v))}" for s, v in seeds.items()) or "-"
    studies_run = f"Studies: {', '.join(studies) or 'none'}. Seeds: {seeds_run}."
    parts += [f"<p>{html.escape(run_line(studies, preview, configfiles))}</p>"]
    parts.append(f"<p>{html.escape(studies_run)}</p>")
    named = [text for key, text in stand_ins.items() if text and key != "word_vectors_label"]
    parts.append("<p>Stand-ins: " + html.escape("; ".join(named) if named else "none") + ".</p>")
    beside = set() if committed.empty else set(zip(*committed[KEY].T.values))
    keys = pd.Series(list(zip(*comparison.reindex(columns=KEY).T.values)), index=comparison.index)
    shown = (
        comparison.index.isin(list(above)) | keys.isin(beside) | (comparison["verdict"] == NOT_RUN)
    )
    parts += [
        f"<h2>Claims check{mark}</h2>",
        f"<p>{counted(claims['verdict'], 'checks')}. "
        f'Full table with evidence and notes: <span class="file">{claims_file}</span>.</p>',
        _table(tried, "overview-claims", CLAIM_COLUMNS),
        f"<h2>Paper comparison{mark}</h2>",
        f"<p>{counted(comparison['verdict'], 'numbers')}. Below, the {(~shown).sum()} not "
        "shown above (a number not run is not listed). Conventions, stand-ins and notes: "
        f'<span class="file">{comparison_file}</span>.</p>',
        _table(comparison[~shown], "overview-comparison", COMPARISON_COLUMNS),
        "<p>Figures and tables of each study are also in the menu; the rule graph follows "
        "below.</p>",
        "</div>",
    ]
    return "\n".join(parts) + "\n"


def preview_mark(preview: object) -> str:
    """The mark a preview's headings carry (here: the report shows each rule's script)."""
    return " (PREVIEW)" if preview else ""

"""The extension study's per-seed values, one table per question (csv and markdown, every seed
and the interval over seeds) and its claims (csv and markdown)."""

import pandas as pd

from isotropy.extensions import results
from isotropy.extensions.design import TITLES
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.traces import read_traces
from isotropy.verdicts.claims import claims_markdown
from isotropy.verdicts.extension_answers import judged_claims


def seed_values(runs: list[dict], trace_paths: list[str], epoch_paths: list[str]) -> pd.DataFrame:
    """Every question's per-seed values from the runs' traces and the fine-tuning epochs."""
    keys = [{"setup": r["dataset"], "head": r["head"]} for r in runs]
    traces = read_traces(trace_paths, keys)
    deep = traces["head"].str.startswith("deep") | (traces["head"] == "linear")
    parts = [
        results.criteria_seeds(traces[traces["head"] == "linear"]),
        results.deep_seeds(traces[deep]),
        results.triplet_seeds(traces[traces["head"] == "triplet"]),
    ]
    if epoch_paths:
        parts.append(results.heldout_seeds(pd.concat(map(pd.read_csv, epoch_paths))))
    return pd.concat([p for p in parts if not p.empty], ignore_index=True)


def markdown(table: pd.DataFrame, title: str, settings_line: str) -> str:
    """A question's table as markdown, with the settings that made it."""
    body = table.to_markdown(index=False, floatfmt=".4g") if not table.empty else "(no runs)"
    return f"# {title}\n\nSettings: {settings_line}.\n\n{body}\n"


def main(snakemake):
    configure_from_snakemake(snakemake)
    traces, epochs = list(snakemake.input.traces), list(snakemake.input.epochs)
    seeds = seed_values(snakemake.params.runs, traces, epochs)
    with atomic_path(snakemake.output.seeds) as tmp:
        seeds.to_csv(tmp, index=False)
    csvs = results.by_question(snakemake.output.tables)
    markdowns = results.by_question(snakemake.output.markdown)
    for question, title in TITLES.items():
        ours = seeds[seeds["question"] == question]
        table = results.question_table(ours, snakemake.params.level)
        with atomic_path(csvs[question]) as tmp:
            table.to_csv(tmp, index=False)
        with atomic_path(markdowns[question]) as tmp:
            text = markdown(table, title, snakemake.params.settings_line)
            tmp.write_text(text, encoding="utf-8")
    claims = judged_claims(seeds)  # a model that did not learn: not judged
    with atomic_path(snakemake.output.claims) as tmp:
        claims.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.claims_markdown) as tmp:
        tmp.write_text(claims_markdown(claims, "Claims of the extension study"), encoding="utf-8")
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

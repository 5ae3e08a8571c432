"""The report's opening page: the forest plot of the paper comparison (isotropy.verdicts.forest),
then the run, its claims and the paper comparison (isotropy.reporting)."""

from pathlib import Path

import pandas as pd

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.reporting import (
    configuration_line,
    forest_html,
    overview_html,
    preview_mark,
    recorded_files,
)
from isotropy.verdicts.comparison import as_shown
from isotropy.verdicts.forest import forest_caption, listed_rows, plot_forest, undrawn_rows
from isotropy.verdicts.tolerances import marked


def main(snakemake):
    configure_from_snakemake(snakemake)
    comparison = pd.read_csv(snakemake.input.comparison)
    preview = snakemake.params.preview
    seeds = dict(snakemake.params.seeds)
    # The figure from the comparison table alone; its caption adds the settings that made it.
    plot_forest(comparison, snakemake.output.forest_pdf, snakemake.output.forest_png, preview)
    caption = forest_caption(
        comparison, seeds, dict(snakemake.params.recorded), snakemake.input.comparison
    )
    undrawn, listed = marked(undrawn_rows(comparison)), listed_rows(comparison)
    forest = forest_html(
        Path(snakemake.output.forest_png).read_bytes(),
        caption,
        comparison,
        undrawn=undrawn,
        listed=listed,
        mark=preview_mark(preview),
    )
    page = snakemake.output.html
    made_with = recorded_files(snakemake.config, "preview_study" if preview else "main_study")
    # A near-guaranteed Spearman ρ is shown as such and never counted as a pass (issue 79).
    text = overview_html(
        marked(pd.read_csv(snakemake.input.claims)),
        marked(as_shown(comparison)),  # a stand-in named once per row
        studies=snakemake.params.studies,
        seeds=seeds,
        stand_ins=dict(snakemake.params.stand_ins),
        # Which files were laid over each other depends on how the run was invoked (the audit
        # re-reads the same configuration from one file), so they are no parameter (that would
        # make this page stale on every audit): the run's own record names them, and the
        # content, by digest, is what made the run.
        configfiles=[*filter(None, [made_with]), configuration_line(snakemake.config, page)],
        made_with=made_with,
        preview=preview,
        forest=forest,
        committed=marked(pd.read_csv(snakemake.input.committed)),
        above=[*undrawn.index, *listed.index],  # each row once
    )
    with atomic_path(snakemake.output.html) as tmp:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

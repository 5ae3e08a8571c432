"""Our numbers beside the papers': results/paper_comparison.csv and results/paper_comparison.md.

Thin entry point for rule ``compare_with_papers``: the published values are data
(config/published_values.csv), the quantities are measured by
:func:`isotropy.verdicts.measurements.measure` (as for the claims), and
:mod:`isotropy.verdicts.comparison` joins the two and judges each row.
"""

import logging

from isotropy import studies
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.reporting import counted
from isotropy.standins import StandIns
from isotropy.verdicts.comparison import compare, comparison_markdown, read_published
from isotropy.verdicts.measurements import as_preview, load_tables, measure
from isotropy.verdicts.tolerances import marked


def main(snakemake):
    configure_from_snakemake(snakemake)
    inputs = dict(snakemake.input.items())
    tables = load_tables(inputs, dict(snakemake.params.run_keys))
    config, stand = dict(snakemake.params.config), StandIns(**snakemake.params.stand_ins)
    measured = measure(tables, config, stand, studies.table_measures())
    table = compare(
        read_published(inputs["published"], studies.published_studies()),
        measured,
        {name.split("_")[0] for name in tables},
    )
    if snakemake.params.get("preview"):  # a preview's comparison: results/preview/ as main's
        table = as_preview(table, snakemake.params.preview)
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.markdown) as tmp:
        tmp.write_text(comparison_markdown(table), encoding="utf-8")
    # in the report's words and form: "16 paper numbers compared: agrees (4), ..."
    said = counted(marked(table)["verdict"], "paper numbers compared")
    logging.getLogger("isotropy.verdicts").info("%s", said)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

"""Our numbers beside the papers': results/paper_comparison.csv and results/paper_comparison.md.

Thin entry point for rule ``compare_with_papers``: the paper values, tolerances and verdicts are
in :mod:`isotropy.comparison`.
"""

import logging

from isotropy.comparison import StandIns, compare_results, comparison_markdown
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    tables = {name: str(path) for name, path in snakemake.input.items()}
    table = compare_results(
        tables, dict(snakemake.params.config), StandIns(**snakemake.params.stand_ins)
    )
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.markdown) as tmp:
        tmp.write_text(comparison_markdown(table), encoding="utf-8")
    counts = table["verdict"].value_counts().to_dict()
    logging.getLogger("isotropy.comparison").info(
        "%d paper numbers compared: %s", len(table), counts
    )
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

"""Check the papers' claims on this run's results: results/claims.csv and results/claims.md.

Thin entry point for rule ``check_claims``: the quantities are measured by
:func:`isotropy.verdicts.measurements.measure` (the same function rule ``compare_with_papers``
uses), the claims and their bounds in the studies' records (:mod:`isotropy.studies`), judged by
:mod:`isotropy.verdicts.claims`.
"""

import logging

import pandas as pd

from isotropy import studies
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.reporting import counted
from isotropy.standins import StandIns
from isotropy.verdicts.claims import check_claims, claims_markdown
from isotropy.verdicts.measurements import as_preview, load_tables, measure
from isotropy.verdicts.tolerances import marked


def main(snakemake):
    configure_from_snakemake(snakemake)
    tables = load_tables(dict(snakemake.input.items()), dict(snakemake.params.run_keys))
    config, stand = dict(snakemake.params.config), StandIns(**snakemake.params.stand_ins)
    measured = measure(tables, config, stand, studies.table_measures())
    run = {name.split("_")[0] for name in tables}
    table = check_claims(measured, run, studies.measured_claims())
    # the listed studies' own claims pages (their records, isotropy.studies): each its own Holm
    # family, guarded, the same rows as on the study's page
    table = pd.concat([table, *studies.claim_pages(tables)], ignore_index=True)
    if snakemake.params.get("preview"):  # a preview's claims: results/preview/ as the main study
        table = as_preview(table, snakemake.params.preview)
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.markdown) as tmp:
        tmp.write_text(claims_markdown(table), encoding="utf-8")
    # in the report's words: a near-guaranteed claim marked, not counted as supported
    logging.getLogger("isotropy.verdicts").info("%s", counted(marked(table)["verdict"], "checks"))
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

"""Check the papers' claims on this run's results: results/claims.csv and results/claims.md.

Thin entry point for rule ``check_claims``: the quantities are measured by
:func:`isotropy.verdicts.measurements.measure` (the same function rule ``compare_with_papers``
uses), the claims and their bounds are in :mod:`isotropy.verdicts.claims`.
"""

import logging

import pandas as pd

from isotropy.extensions.results import claim_values
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.rajaee_cls.results import claim_values as cls_claim_values
from isotropy.verdicts.claims import (
    CLS_CLAIMS,
    NOT_RUN,
    NOT_SUPPORTED,
    SUPPORTED,
    check_claims,
    claims_markdown,
    mark_undecided,
    with_cls_stand_in,
)
from isotropy.verdicts.learning import guard_cls_claims, guard_heldout_claims
from isotropy.verdicts.measurements import as_preview, load_tables, measure
from isotropy.verdicts.standins import StandIns


def main(snakemake):
    configure_from_snakemake(snakemake)
    named = dict(snakemake.input.items())
    # the extension study's per-seed values (config studies lists it): its claims join the page
    # as their own Holm family, so they read as on results/extensions/claims.md
    extensions = named.pop("extensions_seeds", None)
    extension_seeds = None if extensions is None else pd.read_csv(extensions)
    seed_claims = None if extension_seeds is None else claim_values(extension_seeds)
    tables = load_tables(named, dict(snakemake.params.run_keys))
    measured = measure(
        tables, dict(snakemake.params.config), StandIns(**snakemake.params.stand_ins)
    )
    # the Rajaee CLS study's per-seed values (config studies lists rajaee_cls): their own family too
    families = []
    if "rajaee_cls_runs" in tables:
        values = cls_claim_values(tables["rajaee_cls_runs"], tables.pop("rajaee_cls_layers"))
        families.append((values, CLS_CLAIMS, "rajaee_cls"))
    studies = {name.split("_")[0] for name in tables}
    table = check_claims(measured, studies, seed_claims, families)
    if seed_claims is not None:  # same-optimum rows whose run cannot tell
        table = mark_undecided(table, seed_claims)
    if extension_seeds is not None:  # a held-out model that did not learn: not judged
        table = guard_heldout_claims(table, extension_seeds)
    if "rajaee_cls_runs" in tables:
        table = guard_cls_claims(table, tables["rajaee_cls_runs"])  # not learned: not judged
        table = with_cls_stand_in(table, list(tables["rajaee_cls_runs"]["model"]))
    if snakemake.params.get("preview"):  # a preview's claims: results/preview/ as the main study
        table = as_preview(table, snakemake.params.preview)
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.markdown) as tmp:
        tmp.write_text(claims_markdown(table), encoding="utf-8")
    counts = table["verdict"].value_counts()
    logging.getLogger("isotropy.verdicts").info(
        "%d checks: %d supported, %d not supported, %d not run",
        len(table),
        counts.get(SUPPORTED, 0),
        counts.get(NOT_SUPPORTED, 0),
        counts.get(NOT_RUN, 0),
    )
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

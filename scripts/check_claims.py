"""Check the papers' claims on this run's results: results/claims.csv and results/claims.md.

Thin entry point for rule ``check_claims``: the claims and their thresholds are in
:mod:`isotropy.claims`.
"""

import logging

from isotropy.claims import NOT_RUN, NOT_SUPPORTED, SUPPORTED, check_results, claims_markdown
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    inputs = snakemake.input
    names = set(inputs.keys())
    run_keys = dict(snakemake.params.run_keys)
    traces = {
        study: list(inputs[f"{study}_traces"]) for study in run_keys if f"{study}_traces" in names
    }
    correlations = {study: str(inputs[f"{study}_correlations"]) for study in traces}
    table = check_results(
        traces=traces,
        correlations=correlations,
        run_keys=run_keys,
        istar_runs=str(inputs.istar_runs) if "istar_runs" in names else None,
        geometry_sts=str(inputs.geometry_sts) if "geometry_sts" in names else None,
    )
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.markdown) as tmp:
        tmp.write_text(claims_markdown(table), encoding="utf-8")
    counts = table["verdict"].value_counts()
    logging.getLogger("isotropy.claims").info(
        "%d checks: %d supported, %d not supported, %d not run",
        len(table),
        counts.get(SUPPORTED, 0),
        counts.get(NOT_SUPPORTED, 0),
        counts.get(NOT_RUN, 0),
    )
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

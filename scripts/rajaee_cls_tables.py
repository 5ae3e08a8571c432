"""The Rajaee CLS study's tables (runs.csv, layers.csv) and its two claims (claims.csv, claims.md)
from every run's metrics.json (isotropy.rajaee_cls.results)."""

from isotropy.configuration.studies import RajaeeCls
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.rajaee_cls.results import collect
from isotropy.studies.rajaee_cls import check_claims
from isotropy.verdicts.claims import claims_markdown


def main(snakemake):
    configure_from_snakemake(snakemake)
    settings = RajaeeCls.model_validate(snakemake.params.settings)
    runs, layers = collect(list(snakemake.input.metrics), list(snakemake.params.runs))
    claims = check_claims(runs, layers)
    for table, path in ((runs, "runs"), (layers, "layers"), (claims, "claims")):
        with atomic_path(snakemake.output[path]) as tmp:
            table.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.markdown) as tmp:
        tmp.write_text(claims_markdown(claims, "CLS claims"), encoding="utf-8")
    record_step(snakemake, seeds=settings.seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

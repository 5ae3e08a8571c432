"""One sensitivity cell's per-seed numbers (isotropy.sensitivity.seed_row)."""

import json

import pandas as pd

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.sensitivity import seed_row


def main(snakemake):
    configure_from_snakemake(snakemake)
    rows = []
    for trace_path, summary_path in zip(snakemake.input.traces, snakemake.input.summaries):
        trace = pd.read_parquet(trace_path)
        summary = json.loads(open(summary_path, encoding="utf-8").read())
        rows.append(
            {
                **snakemake.params.cell,
                "seed": int(trace["seed"].iloc[0]),
                "dimension": summary["dim"],
                "clusters": summary["clusters"],
                "items": summary["items"],
                "rms_centred_norm": summary["rms_centred_norm"],
                "wall_seconds": summary["wall_seconds"],
                **seed_row(trace),
            }
        )
    with atomic_path(snakemake.output.seeds) as tmp:
        pd.DataFrame(rows).to_csv(tmp, index=False)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

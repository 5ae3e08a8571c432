r"""The sensitivity table and figures from the cells run so far (results/sensitivity/partial/).

For a grid that cannot finish in the time available: cells run in priority order and each writes
its per-seed file as soon as its seeds have run (rule sensitivity_cell). This tabulates those files
with the same code as rule tabulate_sensitivity and names every configured cell not yet run:

    ISOTROPY_MIRROR=... python scripts/sensitivity_partial.py \
        --configfile config.yaml config/offline.yaml
"""

import argparse
import os
import sys
import types
from pathlib import Path

import pandas as pd

from isotropy import paths, standins, studies
from isotropy.io import atomic_path
from isotropy.plots.checks import save_figure
from isotropy.plots.main import phases, r_by_condition
from isotropy.sensitivity import derived_labels, write_tables
from isotropy.workflow import config as workflow_config


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", nargs="+", required=True)
    args = parser.parse_args(argv)
    config, settings = workflow_config.load_config(args.configfile)  # config: defaults filled
    cells = studies.sensitivity.cells(settings)
    files = studies.sensitivity.cell_files(settings)
    done = [f for f in files if os.path.isfile(f)]
    missing = ["/".join(c.values()) for c, f in zip(cells, files) if not os.path.isfile(f)]
    if not done:
        print("no sensitivity cell has run yet", file=sys.stderr)
        return 1
    out = Path(paths.sensitivity_file("partial"))
    out.mkdir(parents=True, exist_ok=True)
    outputs = types.SimpleNamespace(
        table=out / "table.csv", markdown=out / "table.md", seeds=out / "seeds.csv"
    )
    line = studies.sensitivity.settings_line(settings) + f"; {len(done)} of {len(cells)} cells run"
    level = config["sensitivity"]["interval_level"]
    table = write_tables(done, outputs, line, level, atomic_path, missing)
    labels = {
        **standins.encoder_labels(settings, standins.workflow_stand_ins(settings)),
        **derived_labels(settings.sensitivity.derived),
    }
    save_figure(
        r_by_condition(table, line, labels), out / "r_by_condition.pdf", out / "r_by_condition.png"
    )
    runs = [
        (run, path)
        for run, path in zip(
            studies.sensitivity.phase_runs(settings), studies.sensitivity.phase_files(settings)
        )
        if os.path.isfile(path)
    ]
    if runs:
        traces = pd.concat(
            [
                pd.read_parquet(path).assign(
                    setup=r["setup"], vectors=r["vectors"], label_set=r["label_set"]
                )
                for r, path in runs
            ]
        )
        save_figure(phases(traces, line, labels), out / "phases.pdf", out / "phases.png")
    print(f"{len(done)} of {len(cells)} cells in {out}; not run: {', '.join(missing) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

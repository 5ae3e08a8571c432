"""The main paper's section 2 on real points: Eq. (3) optimised by projected gradient ascent from
a seeded sample of a main-study data set's sentence embeddings, with Eq. (1), Eq. (2), IsoScore,
silhouette and the intra-class spread per step, and footnote 2's ‖w_c‖/n_c per class."""

import logging

import numpy as np
import pandas as pd

from isotropy.configuration.studies import Section2
from isotropy.embeddings.texts import load_embeddings
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.metrics import objectives
from isotropy.optimize import build_problem
from isotropy.plots import main as main_plots
from isotropy.plots.checks import save_figure
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    log = logging.getLogger("section2_figure")
    settings = Section2.model_validate(snakemake.params.settings)
    vectors, index = load_embeddings(snakemake.input.vectors, snakemake.input.index)
    problem = build_problem(pd.read_parquet(snakemake.input.table), index, vectors)
    if problem.multilabel or problem.right is not None:
        raise ValueError(
            "the section 2 figure needs a single-text, single-label data set (e.g. polarity)"
        )
    rng = np.random.default_rng(settings.seed)
    items = rng.choice(problem.items, size=min(settings.items, problem.items), replace=False)
    points, labels = problem.vectors[problem.left[items]], np.asarray(problem.targets)[items]
    log.info(
        "Eq. (3) ascent on %d items x %d dims, %d steps",
        len(points),
        points.shape[1],
        settings.steps,
    )
    trace, classes = objectives.eq3_ascent_trace(
        points,
        labels,
        settings.steps,
        settings.learning_rate,
        settings.seed,
        settings.every,
    )
    log.info(
        "trace:\n%s\nclasses:\n%s", trace.to_string(index=False), classes.to_string(index=False)
    )
    for frame, path in ((trace, snakemake.output.trace), (classes, snakemake.output.classes)):
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)
    figure = main_plots.plot_section2(trace, classes)
    save_figure(figure, snakemake.output.pdf, snakemake.output.png)
    record_step(snakemake, seeds=[settings.seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

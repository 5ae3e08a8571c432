"""Draw one of the I-STAR poster's estimator figures on point clouds of known isotropy: Figure 4
(IsoScore* against ζ; IsoScore vs IsoScore* against the mini-batch size), Figures 2-3 (clouds
with the poster's average cosines, with their IsoScore) or the line, circle and sphere (IsoScore
against (k - 1)/(d - 1)), with the tables they plot."""

import logging

import numpy as np

from isotropy.configuration.studies import IstarEstimator
from isotropy.io import atomic_path
from isotropy.istar import estimator
from isotropy.logs import configure_from_snakemake
from isotropy.plots import istar as istar_plots
from isotropy.plots.checks import save_figure
from isotropy.provenance import record_step


def _csv(frame, path):
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def main(snakemake):
    configure_from_snakemake(snakemake)
    log = logging.getLogger("istar_estimator_figure")
    settings = IstarEstimator.model_validate(snakemake.params.settings)
    out = snakemake.output
    if snakemake.rule == "istar_figure4":
        variances = estimator.spectrum(settings.dim, settings.spectrum_ratio)
        log.info(
            "Figure 4: d = %d, true IsoScore %.4f",
            settings.dim,
            estimator.true_isoscore(variances),
        )
        curves = estimator.zeta_curves(
            variances,
            settings.sample_sizes,
            settings.zetas,
            settings.reference_size,
            settings.seed,
        )
        stability = estimator.minibatch_stability(
            variances,
            settings.batch_sizes,
            settings.draws,
            settings.stability_zeta,
            settings.reference_size,
            settings.seed + 1,
        )
        log.info("mini-batch stability:\n%s", stability.to_string(index=False))
        _csv(curves, out.zeta_table)
        _csv(stability, out.batch_table)
        figure = istar_plots.plot_figure4(curves, stability)
    elif snakemake.rule == "istar_shapes":
        points, summary = estimator.shape_clouds(settings.cloud_size, settings.seed)
        log.info("line, circle, sphere:\n%s", summary.to_string(index=False))
        _csv(summary, out.table)
        _csv(points, out.points)
        figure = istar_plots.plot_shapes(points, summary)
    else:
        points, summary = estimator.cosine_clouds(
            tuple(np.asarray(settings.cosine_targets, dtype=float)),
            settings.cloud_size,
            settings.seed,
        )
        log.info("Figures 2-3:\n%s", summary.to_string(index=False))
        _csv(summary, out.table)
        _csv(points, out.points)
        figure = istar_plots.plot_figures2_3(points, summary)
    save_figure(figure, out.pdf, out.png)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

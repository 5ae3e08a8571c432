"""The per-layer CLS isotropy figure of the Rajaee CLS study (isotropy.plots.rajaee_cls)."""

import pandas as pd

from isotropy.configuration.studies import RajaeeCls
from isotropy.logs import configure_from_snakemake
from isotropy.plots.checks import save_figure
from isotropy.plots.rajaee_cls import plot_cls_layers
from isotropy.provenance import record_step

# Where the method's clusters are fitted, as the title says it.
FITTED = {"offline": "on the training set", "batch": "per batch"}


def main(snakemake):
    configure_from_snakemake(snakemake)
    settings = RajaeeCls.model_validate(snakemake.params.settings)
    training, method = settings.training, settings.cluster_method
    title = (
        f"CLS isotropy per layer after fine-tuning ({training.epochs} epochs, "
        f"{training.train_subset or 'all'} training examples, max length {training.max_length}, "
        f"lr {training.learning_rate:g}; method: {method.clusters} k-means clusters, "
        f"{method.directions} directions, fitted {FITTED[method.fit]}; {len(settings.seeds)} seeds)"
    )
    figure, _ = plot_cls_layers(pd.read_csv(snakemake.input.layers), title)
    save_figure(figure, snakemake.output.pdf, snakemake.output.png)
    record_step(snakemake, seeds=settings.seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

"""I-STAR poster Figure 1: the average activation per dimension of sentence embeddings of the
SST-2 validation sentences, one panel per configured sentence encoder, with its table and the
summary numbers (largest over median |mean|, average cosine, IsoScore)."""

import logging
from pathlib import Path

import pandas as pd

from isotropy.compute import resolve_device
from isotropy.embeddings.texts import SentenceEncoderSpec, load_sentence_encoder
from isotropy.io import atomic_path
from isotropy.istar import estimator
from isotropy.logs import configure_from_snakemake
from isotropy.plots import istar as istar_plots
from isotropy.plots.checks import save_figure
from isotropy.provenance import record_step
from isotropy.readers.tasks import load_task_split


def main(snakemake):
    configure_from_snakemake(snakemake)
    log = logging.getLogger("istar_activation_figure")
    device = str(resolve_device(snakemake.params.device))
    texts = load_task_split("sst2", "validation", Path(snakemake.input.validation).parent)[
        "text"
    ].tolist()
    tables, summaries = [], []
    for name, params in snakemake.params.encoders.items():
        spec = SentenceEncoderSpec.from_params(params)
        log.info("encoding %d SST-2 validation sentences with %s on %s", len(texts), name, device)
        model = load_sentence_encoder(spec, device)
        vectors = model.encode(
            texts, batch_size=spec.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        tables.append(estimator.average_activation(vectors).assign(encoder=name))
        summaries.append({"encoder": name, **estimator.activation_summary(vectors)})
    activations, summary = pd.concat(tables, ignore_index=True), pd.DataFrame(summaries)
    log.info("Figure 1:\n%s", summary.to_string(index=False))
    for frame, path in ((activations, snakemake.output.table), (summary, snakemake.output.summary)):
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)
    figure = istar_plots.plot_figure1(activations)
    save_figure(figure, snakemake.output.pdf, snakemake.output.png)
    record_step(snakemake, device=device)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

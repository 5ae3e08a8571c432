"""What an embedding job costs, for every study that reads sentence embeddings or word vectors:
the measured cost per text of each encoder (config/costs.csv, :mod:`isotropy.costs`), the
unique texts of each data set, and the wall time of one ``embed_sentences`` or
``lookup_word_vectors`` job. Plain Python (no torch): the estimate imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from isotropy import costs, paths
from isotropy.workflow import config as workflow_config

# (hub name, data set): process-CPU s per unique text on one thread; keyed by the model measured
# (models.<name>.model), whatever the encoder is called.
EMBED_CPU_SECONDS_PER_TEXT = costs.by_model("embed_cpu_seconds_per_text")

EMBED_LOAD_CPU_SECONDS = max(costs.by_model("embed_load_cpu_seconds").values())

WORD_VECTOR_CPU_SECONDS = costs.value("word_vector_lookup_cpu_seconds")

# Unique texts of each data set as prepared from the offline mirror, used before the data are
# prepared; a prepared table is counted instead.
MIRROR_UNIQUE_TEXTS = {
    dataset: int(count) for dataset, count in costs.by_dataset("mirror_unique_texts").items()
}


def unique_text_count(dataset: str, workdir: Path = Path(".")) -> int | None:
    """Unique texts of a data set: counted in its prepared table, else the mirror's count."""
    table = workdir / paths.dataset_table(dataset)
    if not table.is_file():
        return MIRROR_UNIQUE_TEXTS.get(dataset)
    # Here, not at the top: isotropy.embeddings belongs to the model stack, which the estimate
    # (run before every `make run`) should not load for a count.
    import pandas as pd

    from isotropy.embeddings import unique_texts

    return len(unique_texts(pd.read_parquet(table)))


def embedding_seconds(
    config: Mapping[str, Any], encoder: str, dataset: str, workdir: Path = Path(".")
) -> float | None:
    """Estimated wall time to embed (or look up) one data set on 2 idle cores (None: no cost
    measured); 0 where its vectors are written already."""
    if (workdir / paths.embedding_file("vectors.npy", encoder, dataset)).is_file():
        return 0.0
    if config["encoders"][encoder]["kind"] == "word-vectors":
        return WORD_VECTOR_CPU_SECONDS  # the rule runs on one thread
    texts = unique_text_count(dataset, workdir)
    spec = workflow_config.model_spec(config, config["encoders"][encoder]["model"])
    model = spec.model or config["encoders"][encoder]["model"]  # a folder-only model: its name
    measured = [v for (m, _), v in EMBED_CPU_SECONDS_PER_TEXT.items() if m == model]
    per_text: float | None = EMBED_CPU_SECONDS_PER_TEXT.get((model, dataset))
    if per_text is None and measured:
        per_text = max(measured)  # another data set of the same model: its dearest per text
    if texts is None or per_text is None:
        return None
    return (EMBED_LOAD_CPU_SECONDS + texts * per_text) / 2  # the rule's 2 threads


def embedding_job_seconds(
    config: Mapping[str, Any], wildcards: Mapping[str, Any], pace: costs.Pace
) -> float:
    """Wall seconds of one embedding or word-vector lookup job: :func:`embedding_seconds` as if
    its vectors were absent (the job is to run; 0 where no cost is measured), and its start-up."""
    encoder, dataset = wildcards.get("encoder", ""), wildcards.get("dataset", "")
    if encoder not in config.get("encoders", {}) or not dataset:
        return pace.job_overhead
    work = embedding_seconds(config, encoder, dataset, Path("-"))  # "-": no vectors there
    return (work or 0.0) + pace.job_overhead

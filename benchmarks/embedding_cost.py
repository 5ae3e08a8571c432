"""Measure what `make preview`/`make run` estimate the embeddings from: CPU seconds per text.

Usage (after the workflow has prepared the main study's data, e.g. `make preview`, from the
folder that holds resources/):
    python benchmarks/embedding_cost.py --configfile config.yaml config/offline.yaml [--sample 1000]

For each main-study setup whose encoder is a sentence transformer it encodes a seeded sample of
the setup's unique texts (single-threaded, the configured batch size) and prints process-CPU
seconds per text, after loading the model (loading is timed apart). For word vectors it times a
whole lookup job: reading the vector file and looking up every word of the setup (reading
dominates). Process-CPU time, single-threaded, holds on a busy machine where wall time does not;
the ``EMBED_CPU_SECONDS_PER_TEXT`` and ``WORD_VECTOR_CPU_SECONDS`` tables of
``isotropy.estimate`` are these numbers.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from isotropy.embeddings import (
    SentenceEncoderSpec,
    load_sentence_encoder,
    lookup_word_vectors,
    unique_texts,
)
from isotropy.sources import load_word_vectors, word_vectors_file
from isotropy.workflow.config import load_config


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--configfile", nargs="+", required=True)
    parser.add_argument("--sample", type=int, default=1000, help="texts per setup to encode")
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = load_config(args.configfile)
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for dataset, setup in config["main"]["setups"].items():
        name = setup["encoder"]
        encoder = config["encoders"][name]
        table = pd.read_parquet(f"resources/data/{dataset}.parquet")
        texts = unique_texts(table)
        cpu = time.process_time()
        if encoder["kind"] == "sentence-transformer":
            fields = {k: encoder[k] for k in ("model", "revision", "path", "batch_size")}
            model = load_sentence_encoder(SentenceEncoderSpec(**fields), "cpu")
            loaded = time.process_time() - cpu
            rng = np.random.default_rng(0)
            sample = [texts[i] for i in rng.permutation(len(texts))[: args.sample]]
            cpu = time.process_time()
            model.encode(sample, batch_size=encoder["batch_size"], show_progress_bar=False)
            per_text = (time.process_time() - cpu) / len(sample)
            print(
                f"{name} {dataset}: {len(texts)} unique texts, model load {loaded:.1f} CPU-s, "
                f"{per_text:.5f} CPU-s per text ({len(sample)} texts, 1 thread)"
            )
        else:
            vectors = load_word_vectors(
                word_vectors_file(Path("resources/raw") / encoder["source"])
            )
            lookup_word_vectors(table, vectors, "/tmp/lookup.npy", "/tmp/lookup.parquet")
            print(
                f"{name} {dataset}: {len(texts)} unique words, read and look up "
                f"{time.process_time() - cpu:.1f} CPU-s (1 job)"
            )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

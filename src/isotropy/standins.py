"""What this configuration uses where the papers used something else (the ``stand_in`` column),
and the papers' names for the models we run: stated in each ``models`` entry (``paper``), never
guessed from a hub name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from isotropy.configuration import Config
from isotropy.configuration.data import WordVectors

# The models each paper reports, by the names in its tables (config/published_values.csv).
CAI_MODELS = ("BERT", "DistilBERT", "GPT", "GPT-2", "ELMo")  # Cai et al., Table 3
ISTAR_MODELS = ("BERT", "ALBERT", "DistilBERT")  # Rudman & Eickhoff


@dataclass(frozen=True)
class StandIns:
    """Descriptions of this run's stand-ins, from the configuration (rule params)."""

    word_vectors: str = ""  # the vectors used for the paper's word2vec / GloVe
    word_vectors_label: str = ""  # the same in two words, for figure panels ("GloVe 50-d")
    pos_labels: str = ""
    supersense_labels: str = ""
    corpus: str = ""  # Cai et al.'s WikiText-2 / PTB
    sts_split: str = ""


def describe_stand_ins(config: Config, mirror: str | None) -> dict[str, str]:
    """Plain strings (so they can be rule params) naming each stand-in of this configuration."""
    out = dict.fromkeys((field.name for field in fields(StandIns)), "")
    if mirror and (source := config.sources.get("word2vec")) and source.mirror:
        files = ", ".join(source.mirror)
        name = "GloVe" if "glove" in files.lower() else "word vectors"
        dims = re.findall(r"(?<!\S)(\d+)d(?!\S)", files.replace(".", " "))  # glove.6B.50d.txt
        label = f"{name} {dims[0]}-d" if dims else name
        out["word_vectors"] = f"{label} (mirror file {files}) for NLPL word2vec model 222 (300-d)"
        out["word_vectors_label"] = label
    if config.pos_source == "wordnet":
        out["pos_labels"] = (
            f"WordNet POS labels of the {config.pos_standin_size} most frequent "
            "words (pos_source: wordnet) for CoDWoE"
        )
    if config.supersense_source == "wordnet":
        out["supersense_labels"] = (
            "Tikhonov et al.'s word list labelled with WordNet noun supersenses here (the "
            "paper's 2,275 items are not reproduced)"
        )
    if (geometry := config.geometry) is None:
        return out
    corpus, windows = geometry.clusters.corpus, geometry.clusters.corpus.windows
    if corpus.format == "lines":  # a sentence-per-line file in place of the hub's WikiText-2
        paper = f"PTB / WikiText-2 in {windows}-token windows" if windows else "WikiText-2"
        out["corpus"] = f"{corpus.name} sentences ({corpus.source}/{corpus.file}) for {paper}"
    elif windows:  # Cai et al.'s protocol on a hub WikiText split: PTB is not available here
        hub = config.sources[corpus.source].hub
        out["corpus"] = (
            f"WikiText-2 {hub.split if hub else ''} split in {windows}-token windows (the paper "
            "names PTB and WikiText-2; PTB is not available here)"
        )
    if (split := geometry.sts.splits.stsb) != "validation":
        out["sts_split"] = f"STS-B {split} split (the authors' notebook reads dev.tsv)"
    return out


def paper_name(config: Mapping[str, Any], model: str | None) -> str | None:
    """``models.<model>.paper``: the model's name in the papers (None: none studied it)."""
    return ((config.get("models") or {}).get(model) or {}).get("paper")


def encoder_paper_name(config: Mapping[str, Any], encoder: str) -> str:
    """Mickus et al.'s name of an encoder (Table 2): its model's ``paper``, else its own name."""
    entry = (config.get("encoders") or {}).get(encoder) or {}
    return (
        entry.get("kind") == "sentence-transformer" and paper_name(config, entry.get("model"))
    ) or encoder


def model_stand_in(config: Mapping[str, Any], model: str, paper: str) -> str:
    """'' when ``models.<model>`` is the paper's ``paper`` itself, else 'model (hub) for paper'
    (hub: ``models.<model>.model``, or the configured name for a folder-only model)."""
    if paper_name(config, model) == paper:
        return ""
    hub = ((config.get("models") or {}).get(model) or {}).get("model")
    return f"{model} ({hub or model}) for {paper}"


def encoder_labels(config: Config, stand: Mapping[str, str]) -> dict[str, str]:
    """Encoder name → what its vectors really are, for figure panels ("GloVe 50-d (stand-in for
    word2vec 300-d)"; every other encoder by its name)."""
    label = stand.get("word_vectors_label")
    return {
        name: f"{label} (stand-in for {name} 300-d)"
        if label and isinstance(entry, WordVectors) and entry.source == "word2vec"
        else name
        for name, entry in config.encoders.items()
    }


def workflow_stand_ins(config: Config) -> dict[str, str]:
    """:func:`describe_stand_ins` with the mirror this run reads ($ISOTROPY_MIRROR or config)."""
    from isotropy.sources import resolve_mirror

    mirror = resolve_mirror(config.mirror)
    return describe_stand_ins(config, str(mirror) if mirror else None)

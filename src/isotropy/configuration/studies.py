"""The fine-tuning studies, the I-STAR estimator figures, section 2 and the extensions."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from isotropy.configuration.base import LearningRate, Section, Seed, Seeds, Unique, optional
from isotropy.configuration.finetune import ClsResources, ClsTraining, Resources, TrainingSettings

SEEDS = [0, 1, 2, 3, 4]
IstarTask = Literal["sst2", "qnli", "rte", "mrpc", "qqp", "cola", "stsb", "sst5", "squad"]
Criterion = Literal["dunn", "calinski_harabasz", "davies_bouldin"]
IntervalLevel = Annotated[
    float, Field(gt=0, lt=1, description="Confidence level of the intervals over seeds.")
]


class Istar(Section):
    """I-STAR fine-tuning (Rudman & Eickhoff 2024), results/istar/."""

    models: Unique[str] = Field(
        min_length=1, description="The models to fine-tune (keys of the top-level `models`)."
    )
    run_models: Unique[str] | None = Field(
        None, min_length=1, description="The names of `models` to fine-tune (null = all)."
    )
    tasks: Unique[IstarTask] = Field(
        ["sst2", "qnli", "rte", "mrpc", "qqp", "cola", "stsb", "sst5", "squad"],
        min_length=1,
        description="GLUE tasks, SST-5, SQuAD v1.1 (with a mirror, tasks it holds).",
    )
    regularisers: Unique[Literal["none", "istar", "cosreg"]] = Field(
        ["none", "istar", "cosreg"],
        min_length=1,
        description="none, istar (λ·(1 − IsoScore*)) or cosreg (CosReg).",
    )
    lambdas: Unique[float] = Field(
        [-5, -3, -1, 0.5, 1, 3, 5],
        min_length=1,
        description="Penalty weights λ (0 is the unregularised baseline, run once).",
    )
    seeds: Seeds = Field(SEEDS, description="Seeds of the runs.")
    training: TrainingSettings = Field(
        default_factory=TrainingSettings, description="Fine-tuning settings."
    )
    figure6_selection: Literal["best", "mean"] = Field(
        "best", description="Figure 6: each method at its best λ (best) or over all λ (mean)."
    )
    figure7_task: IstarTask = Field("sst2", description="The task of Figure 7 (made if run).")
    resources: Resources = Field(default_factory=Resources)


class ClusterMethod(Section):
    """The method's settings."""

    clusters: int = Field(3, ge=1, description="k-means clusters over a batch's CLS states.")
    directions: int = Field(2, ge=0, description="Top directions removed per cluster.")
    fit: Literal["offline", "batch"] = Field(
        "offline",
        description="Where the clusters and directions are fitted: once on the training set's "
        "CLS states, applied unchanged at evaluation (offline, Rajaee & Pilehvar's own use), or "
        "on each batch's states (batch). docs/rajaee-cls.md gives the measured difference.",
    )


class RajaeeCls(Section):
    """Target rajaee_cls_study: the cluster method on CLS states inside fine-tuning; every key
    has a default."""

    WHOLE = True

    models: Unique[str] = Field(
        ["miniLM"],
        min_length=1,
        description="The models to fine-tune (keys of the top-level `models`).",
    )
    tasks: Unique[Literal["sst2", "qnli", "rte", "mrpc", "qqp", "cola", "stsb", "sst5", "wic"]] = (
        Field(["sst2"], min_length=1, description="Tasks fine-tuned (the slides': RTE and WiC).")
    )
    methods: Unique[Literal["none", "cluster"]] = Field(
        ["none", "cluster"],
        min_length=1,
        description="none and/or cluster (isotropy.rajaee_cls.method).",
    )
    seeds: Seeds = Field(SEEDS, description="Seeds of the runs.")
    training: ClsTraining = Field(default_factory=ClsTraining, description="Fine-tuning settings.")
    cluster_method: ClusterMethod = Field(default_factory=ClusterMethod)
    resources: ClsResources = Field(
        default_factory=ClsResources, description="Requests per fine-tuning job."
    )


class IstarEstimator(Section):
    """The I-STAR poster's estimator figures on clouds of known isotropy; null = not made."""

    WHOLE = True

    dim: int = Field(32, ge=2, description="Dimension of the Gaussian clouds.")
    spectrum_ratio: float = Field(
        20.0, ge=1, description="Variances fall geometrically from 1 to 1/ratio along the axes."
    )
    sample_sizes: Unique[Annotated[int, Field(ge=2)]] = Field(
        [16, 64, 256, 4096],
        min_length=1,
        description="Figure 4 left: one seeded sample per size.",
    )
    zetas: Unique[Annotated[float, Field(ge=0, le=1)]] = optional("ζ values drawn.", min_length=2)
    reference_size: int = Field(
        20000, ge=2, description="Draws behind Σ_S (the poster's large sample)."
    )
    batch_sizes: Unique[Annotated[int, Field(ge=1)]] = optional(
        "Figure 4 right: mini-batch sizes.", min_length=1
    )
    draws: int = Field(50, ge=2, description="Seeded mini-batches per size.")
    stability_zeta: float = Field(
        0.75,
        ge=0,
        le=1,
        description="ζ of the IsoScore* set beside IsoScore on the mini-batches.",
    )
    seed: Seed = Field(0, description="Seed of the clouds.")
    cosine_targets: list[Annotated[float, Field(gt=-1, lt=1)]] = Field(
        [0.978, 0.005],
        min_length=2,
        max_length=2,
        description="The poster's cosines of Figures 2-3 (config/published_values.csv).",
    )
    cloud_size: int = Field(500, ge=3, description="Points of each drawn cloud.")
    figure1_encoders: Unique[str] = Field(
        [], description="Figure 1: encoders of the SST-2 validation embeddings drawn."
    )


class Section2(Section):
    """The main paper's section 2 on real points; null = not made."""

    encoder: str = Field("miniLM", description="A key of `encoders`.")
    dataset: str = Field("polarity", description="A single-text, single-label setup of `main`.")
    items: int = Field(1000, ge=3, description="Points of the seeded sample.")
    steps: int = Field(300, ge=1, description="Ascent steps.")
    learning_rate: LearningRate = Field(0.01, description="Step of the projected gradient ascent.")
    every: int = Field(10, ge=1, description="Record every `every`-th step (and the last).")
    seed: Seed = Field(0, description="Seed of the sample.")


class Triplet(Section):
    """Triplet margin-loss runs on the table, no classifier."""

    enabled: bool = Field(True, description="Run them.")
    margin: float = Field(1.0, gt=0, description="The triplet loss's margin.")


class Heldout(Section):
    """MiniLM fine-tuned end to end, measured on training and held-out items."""

    setups: Unique[Literal["polarity"]] = Field(["polarity"], description="Setups fine-tuned.")
    train_size: int = Field(1000, ge=4, description="Training items (a seeded split).")
    heldout_size: int = Field(1000, ge=4, description="Held-out items.")
    split_seed: int = Field(0, ge=0, description="Seed of the split.")
    max_epochs: int = Field(6, ge=1, description="Most epochs.")
    patience: int = Field(2, ge=1, description="Epochs without improvement before stopping early.")
    tolerance: float = Field(
        0.005,
        ge=0,
        description="Smallest change of the held-out loss that counts as improvement.",
    )
    learning_rate: LearningRate = Field(2e-05, description="The encoder's AdamW learning rate.")
    head_learning_rate: LearningRate = Field(
        0.001, description="The linear head's learning rate (the main study's)."
    )
    batch_size: int = Field(32, ge=1, description="Training batch size.")
    max_length: int = Field(64, ge=8, description="Tokens per input.")
    eval_batch_size: int = Field(128, ge=1, description="Evaluation batch size.")


class Extensions(Section):
    """Target extensions_study (docs/extensions.md)."""

    setups: Unique[Literal["polarity", "snli", "pos", "supersense"]] = Field(
        min_length=1, description="Main-study setups used."
    )
    items: int | None = Field(
        2000, ge=10, description="A seeded sample of each setup's items (null = all: a GPU run)."
    )
    item_seed: int = Field(0, ge=0, description="Seed of the item sample.")
    seeds: Seeds = Field(SEEDS, description="Seeds of the runs.")
    updates: int = Field(1000, ge=1, description="Updates per run.")
    learning_rate: LearningRate = Field(
        0.001, description="Adam's learning rate (the main study's)."
    )
    metric_stride: int = Field(
        50, ge=1, description="Metrics after every `metric_stride`-th update."
    )
    metric_sample_size: int | None = Field(
        None, ge=2, description="null = exact metrics; n = a seeded sample of n items."
    )
    # The registry's cluster_criteria(), in its order (tests/test_criteria.py holds them equal).
    criteria: Unique[Criterion] = Field(
        ["dunn", "calinski_harabasz", "davies_bouldin"],
        description="Cluster criteria recorded beside IsoScore and silhouette.",
    )
    depths: Unique[Annotated[int, Field(ge=1, le=8)]] = Field(
        [1, 2, 3],
        description="Hidden layers of the deep heads (the linear head always runs).",
    )
    activation: Literal["tanh", "relu", "gelu"] = Field(
        "tanh", description="Activation of the deep heads (tanh: zero-centred, no dead units)."
    )
    width: int | None = Field(
        None, ge=1, description="Width of the deep heads' layers; null = the representation's."
    )
    triplet: Triplet = Field(default_factory=Triplet)
    heldout: Heldout = Field(default_factory=Heldout)
    interval_level: IntervalLevel = 0.95

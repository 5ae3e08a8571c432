"""Readers for every raw source, all returning one table shape; the data-set registry.

Modules, by family:

- ``registry``: :data:`~isotropy.readers.registry.DATASETS`, ``register_dataset``,
  ``discover_readers``, ``prepare_dataset``; the prepared-table shape (``write_dataset``,
  ``validate_table``, ``read_dataset``, ``check_prepared``) and the helpers readers share;
- one module per section-3 family, each registering its data sets next to its reader:
  ``polarity``, ``snli``, ``supersense``, ``pos`` (with ``open_wordnet``, the WordNet reader the
  stand-ins share), ``glue`` (one data set per GLUE task);
- ``tasks``: the I-STAR tasks and their splits; ``sts`` and ``corpus``: the geometry study's data;
- ``inputs``: what Snakemake asks at parse time (sources and options from the configuration).

Adding a data set: a config entry (its source, its main setup) and one new module here that
registers it with ``register_dataset``. Data sets are registered one way: importing this
package imports every module in it (``discover_readers``), so no list names one. Every name is
imported from its module (``from isotropy.readers.sts import read_sts``).
"""

from isotropy.readers.registry import discover_readers

discover_readers(__name__)

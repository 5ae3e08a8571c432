"""Readers for every raw source, all returning one table shape (:mod:`.registry`); importing
the package registers every module's ``DATASETS``, so adding a data set edits no list."""

from isotropy.readers.registry import discover_readers

discover_readers(__name__)

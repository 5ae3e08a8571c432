"""Readers for every raw source, all returning one table shape (:mod:`.registry`).

One module per family registers its data sets next to its reader (``polarity``, ``snli``,
``supersense``, ``pos``, ``glue``); ``tasks``, ``sts`` and ``corpus`` read the I-STAR and geometry
data; ``inputs`` is what Snakemake asks at parse time. Importing this package imports every
module in it (``discover_readers``), so adding a data set edits no list.
"""

from isotropy.readers.registry import discover_readers

discover_readers(__name__)

"""The records of the paper's own studies (sections 2 and 3: main, its preview, GLUE, the
section-2 figure) and of the sensitivity grid around section 3, whose code sits in top-level
modules (:mod:`isotropy.optimize`, :mod:`isotropy.summaries`, :mod:`isotropy.sensitivity`):
their :mod:`~isotropy.paper_studies.spec` for :mod:`isotropy.studies` and what their runs cost
(:mod:`~isotropy.paper_studies.cost`)."""

"""Isotropy, clusters and classifiers: the science behind the reproduction workflow.

Its packages, their floors and what each imports: docs/architecture.md, generated from the code.
"""

__version__ = "0.1.0"

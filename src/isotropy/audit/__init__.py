"""Audit every result against its provenance: is it intact, current, and made by today's code?

The audit starts at every file under ``results/`` and walks each provenance record
(:mod:`isotropy.provenance`) back through its inputs to the raw downloads
(``resources/raw/<source>/manifest.json``). For every file on the way it checks:

* **checksum** – the file still has the sha256 its record gives (a result edited by hand);
* **input** – every input still exists with the sha256 it had when the file was made;
* **stale** – no input is newer than the file (Snakemake would re-make it); an input re-made
  with the very content the file was made from is only a warning;
* **code** – the step's script and every project module it ran are unchanged;
* **params** – what Snakemake itself keeps (``.snakemake/metadata``, ``snakemake --summary``):
  parameters, rule code and the set of inputs are the ones the current workflow and
  configuration would use; a result whose upstream changed is "update pending";
* **raw** – every raw file still matches the sha256 in its source's download manifest (every
  data file a step reads is a download or made from one, I-STAR and geometry included).

Files without a provenance record fall back on Snakemake's metadata (its input list and input
checksums) so that the walk still reaches the raw data; under ``results/`` a missing record is a
mismatch. Package versions that differ from today's are reported as warnings.

The package, in the order an audit runs: :mod:`~isotropy.audit.records` walks the records and
ends each walk at a download manifest and its pins; :mod:`~isotropy.audit.findings` decides how
far a record is believed, and holds the :class:`~isotropy.audit.findings.Finding` every check
returns and formats them; :mod:`~isotropy.audit.orchestration` asks ``snakemake --summary``,
merges both views (:func:`audit`) and is ``isotropy-audit`` (rule
``audit`` runs :func:`audit` through ``scripts/audit_results.py``).
"""

from isotropy.audit.findings import FAIL, OK, WARN, Finding, failures, format_table, write_tsv
from isotropy.audit.orchestration import audit, main, snakemake_summary
from isotropy.audit.records import walk

__all__ = [
    "FAIL",
    "OK",
    "WARN",
    "Finding",
    "audit",
    "failures",
    "format_table",
    "main",
    "snakemake_summary",
    "walk",
    "write_tsv",
]

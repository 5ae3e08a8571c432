"""Audit every result against its provenance: is it intact, current, and made by today's code?

The audit copies what it reads into a workspace (:mod:`isotropy.intake`), then starts at every
file under ``results/`` and walks each provenance record (:mod:`isotropy.provenance`) back
through its inputs to the raw downloads (``resources/raw/<source>/manifest.json``). For every
file on the way it checks:

* **checksum** – the file still has the sha256 its record, and its twins' records, give;
* **input** – every input still exists with the sha256 it had when the file was made;
* **stale** – no input is newer than the file; an input re-made with the very content the file
  was made from is only a warning;
* **code** – the step's script and every project module it ran are unchanged;
* **raw** – every raw file still matches its download manifest, and what it was fetched from
  today's pins;
* **declared** – every result the workflow's target declares is there.

Under ``results/`` a file without a record is a mismatch; package versions that differ from
today's are warnings. :mod:`~isotropy.audit.records` walks the records,
:mod:`~isotropy.audit.findings` holds the :class:`~isotropy.audit.findings.Finding` every check
returns and formats them, :mod:`~isotropy.audit.orchestration` is :func:`audit` and
``isotropy-audit`` (rule ``audit`` runs :func:`audit` through ``scripts/audit_results.py``).
"""

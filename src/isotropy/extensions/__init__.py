"""The main paper's open questions, answered by experiment (config ``extensions``; target
``extensions_study``; docs/extensions.md).

Mickus et al. (2024) close with questions their demonstration leaves open. This study asks them
of the main study's data, encoder and optimiser (full-batch Adam on the embedding table):

1. *criteria*: are the Dunn, Caliński–Harabasz and Davies–Bouldin indices at their best where
   the silhouette is (the paper conjectures they "imply the same optimum")?
2. *deep*: with 1-3 hidden layers, is the top hidden layer's representation anisotropic, and
   does anisotropy reach the lower layers and the table?
3. *triplet*: does a triplet loss over the labels (no classifier) lower IsoScore in every
   setup, or is there one where it does not (appendix B: it "need not")?
4. *heldout*: fine-tuned end to end with a linear head, do held-out sentences' embeddings follow
   the training trend (IsoScore down, silhouette up)?

Modules: ``design`` (the grid, settings, item sample and cost; plain Python), ``probes``,
``heldout``, ``results`` (per-seed values, tables, claim inputs).
"""

"""I-STAR fine-tuning (Rudman & Eickhoff, ICLR 2024): IsoScore* regularisation, CosReg, baseline.

One run fine-tunes a pretrained transformer on one task with loss = task loss + λ · penalty:
``1 − IsoScore*`` of the batch's non-padding token states of every layer, shrunk towards Σ_S
(ζ = 0.2; Σ_S re-estimated every epoch from the current model), or the authors' CosReg (λ < 0
pushes towards anisotropy). It reports the task's validation metric, IsoScore* (ζ = 0.75) of
every layer's [CLS] embeddings and TwoNN of the last layer's.

The runs fine-tune through the shared loop of :mod:`isotropy.finetune`; the task splits are read
by :mod:`isotropy.readers`. This package imports nothing itself: ``study`` is plain Python (the
workflow imports it while it parses); the others need torch.
"""

"""I-STAR fine-tuning (Rudman & Eickhoff, ICLR 2024): IsoScore* regularisation, CosReg, baseline.

One run fine-tunes a pretrained transformer on one task with

    loss = task loss + λ · penalty,

where the penalty is ``1 − IsoScore*(H)`` for I-STAR (H = the non-padding token hidden states
of every transformer layer in the mini-batch, shrunk towards Σ_S with ζ = 0.2, Σ_S re-estimated
at the start of every epoch from a large sample of the current model's token states) and the
authors' CosReg, (ΣW − N)/N² with W the cosine matrix of the batch's non-padding last-layer
token states. λ < 0 pushes towards anisotropy. After training, the run reports the task's
standard validation metric, IsoScore* (ζ = 0.75) of the validation sentence embeddings
(position-0 token, [CLS]) of every layer, and the TwoNN intrinsic dimension of the last layer's
sentence embeddings.

The runs fine-tune through the shared loop of :mod:`isotropy.finetune`; the task splits are read
by :mod:`isotropy.readers`. This package imports nothing itself: ``study`` is plain Python (the
workflow imports it while it parses); the others need torch.
"""

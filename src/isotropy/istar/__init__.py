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

Modules, by concern (the task splits themselves are read by :mod:`isotropy.readers`):

    study         the study's design: the tasks (kind, labels, text columns, headline metric),
                  the runs (models × tasks × regularisers × λ × seeds, λ in paths, outputs) and
                  the settings of one run (config ``istar.training``)
    features      the pretrained model with a new task head and its tokenizer; tokenisation into
                  features and batches (classification, regression, SQuAD)
    regularisers  the I-STAR and CosReg penalties, and Σ_S
    training      the training loop (``finetune``, ``run_and_save``), per-epoch checkpoints and
                  resume
    evaluation    validation scores (SQuAD v1.1 answer extraction and scoring included),
                  IsoScore* per layer, TwoNN; runs.csv from the runs' metrics
    cls_method    regulariser "cluster": Rajaee & Pilehvar's cluster-based method on the CLS
                  states the head reads, every batch; the CLS geometry per layer after training
    cls_results   the CLS study's tables (config rajaee_cls) and its two claims
    spec          the study's record and its estimate (plain Python; isotropy.studies)

This package imports nothing itself: ``study`` is plain Python (the workflow imports it while it
parses); the others need torch.
"""

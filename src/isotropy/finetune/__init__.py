"""Fine-tuning a pretrained transformer with a new task head: the loop, its checkpoints,
features, penalties and evaluation.

Modules, by concern:

    settings      the settings of one run and the regularisers' names (plain Python)
    features      the pretrained model with a new task head and its tokenizer; tokenisation into
                  features and batches (classification, regression, SQuAD)
    regularisers  the I-STAR and CosReg penalties, and Σ_S
    head          a transform of the CLS states the task head reads, inside the forward pass
    training      the training loop (``finetune``, ``run_and_save``), seeding, per-epoch
                  checkpoints and resume
    evaluation    validation scores (SQuAD v1.1 answer extraction and scoring included),
                  IsoScore* per layer, TwoNN
    cls_geometry  the validation CLS states' geometry per layer

This package imports nothing itself; ``settings`` is plain Python, the others need torch.
"""

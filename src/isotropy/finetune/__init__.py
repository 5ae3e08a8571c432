"""Fine-tuning a pretrained transformer with a new task head: the loop, its checkpoints,
features, penalties and evaluation, one module each. This package imports nothing itself;
``settings`` is plain Python, the others need torch.
"""

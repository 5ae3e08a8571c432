"""Figures from stored results only (never retraining), one module per study; ``checks`` holds
the shared helpers and the one saver."""

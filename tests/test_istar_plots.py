"""I-STAR runs table and Figures 5-7, on synthetic metrics files (no training)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from isotropy.configuration.studies import Istar
from isotropy.istar.runs import RUN_COLUMNS, collect_runs
from isotropy.istar.study import format_lambda, run_path
from isotropy.plots import istar as istar_plots
from isotropy.plots.checks import save_figure
from isotropy.studies.istar import outputs as study_outputs


def write_run(root, model, task, regulariser, lam, seed, metric, iso, twonn):
    run = dict(model=model, task=task, regulariser=regulariser, lam=format_lambda(lam), seed=seed)
    path = root / run_path(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    name = "matthews_correlation" if task == "cola" else "accuracy"
    record = {
        "model": {"model": f"hub/{model}", "revision": None, "path": None},
        "task": task,
        "regulariser": regulariser,
        "lambda": float(lam),
        "seed": seed,
        "metric_name": name,
        "metric": metric,
        "scores": {name: metric},
        "isoscore_star": iso,
        "isoscore_star_layers": [iso / 2, iso],
        "twonn": twonn,
        "isoscore_star_validation_reference": iso * 0.9,
    }
    path.write_text(json.dumps(record))
    return path


GRID = [("none", 0), *(("istar", lam) for lam in (-5, -1, 1, 5)), ("cosreg", -1), ("cosreg", 1)]


@pytest.fixture()
def runs(tmp_path) -> pd.DataFrame:
    """Two models, two tasks, every regulariser, three seeds; performance falls as λ rises."""
    rng = np.random.default_rng(0)
    files, names = [], []
    for model, task, (regulariser, lam), seed in itertools.product(
        ("bert", "distil"), ("sst2", "cola"), GRID, range(3)
    ):
        metric = 0.8 - 0.01 * lam - (0.05 if regulariser == "cosreg" else 0) + rng.normal(0, 0.005)
        iso, twonn = 0.3 + 0.05 * lam, 20 + lam + seed
        files.append(write_run(tmp_path, model, task, regulariser, lam, seed, metric, iso, twonn))
        names.append(model)
    return collect_runs(files, model_names=names)


def test_collect_runs_has_one_row_per_run(runs):
    assert len(runs) == 2 * 2 * 7 * 3
    assert list(runs.columns[: len(RUN_COLUMNS)]) == RUN_COLUMNS
    assert {"isoscore_star_layer1", "isoscore_star_layer2"} <= set(runs.columns)


def test_collect_runs_refuses_nan(tmp_path):
    path = write_run(tmp_path, "m", "sst2", "none", 0, 0, float("nan"), 0.2, 10.0)
    with pytest.raises(ValueError, match="NaN"):
        collect_runs([path])


def test_collect_runs_refuses_a_run_evaluated_before_the_training_token_reference(tmp_path):
    path = write_run(tmp_path, "m", "sst2", "none", 0, 0, 0.8, 0.2, 10.0)
    record = json.loads(path.read_text())
    del record["isoscore_star_validation_reference"]
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="predates IsoScore\\* with the training-token"):
        collect_runs([path])


def test_seed_summary_is_mean_and_sample_std(runs):
    summary = istar_plots.seed_summary(runs)
    cell = "model == 'bert' and task == 'sst2' and regulariser == 'istar' and `lambda` == -5"
    row = summary.query(cell).iloc[0]
    values = runs.query(cell)["twonn"].to_numpy()
    assert row["twonn_mean"] == pytest.approx(np.mean(values))
    assert row["twonn_std"] == pytest.approx(np.std(values, ddof=1)) and row["seeds"] == 3


def test_figure6_compares_methods_at_their_best_lambda(runs):
    table = istar_plots.figure6_table(runs, "best")
    bert = table[table.model == "bert"].set_index("method")["metric"]
    # Best negative λ for I-STAR is −5 (0.85), baseline 0.80, CosReg best at λ = −1 (0.76);
    # ± seed noise.
    assert bert["istar<0"] == pytest.approx(0.85, abs=0.01)
    assert bert["none"] == pytest.approx(0.80, abs=0.01)
    assert bert["cosreg"] == pytest.approx(0.76, abs=0.01)
    mean = istar_plots.figure6_table(runs, "mean").set_index(["model", "method"])["metric"]
    assert mean[("bert", "istar<0")] == pytest.approx(0.83, abs=0.01)  # mean over λ = −5, −1
    assert (table["tasks"] == 2).all()


def test_figures_are_written(runs, tmp_path):
    drawn = {}
    for name, draw in istar_plots.FIGURES.items():
        pdf, png = tmp_path / f"{name}.pdf", tmp_path / f"{name}.png"
        drawn[name], table = draw(runs)
        save_figure(drawn[name], pdf, png)
        assert (pdf.read_bytes()[:4], png.read_bytes()[:4]) == (b"%PDF", b"\x89PNG")
        assert not table.empty
    # The plotted data, read back from the figures, against seed means of the runs themselves.
    keys = ["model", "task", "regulariser", "lambda"]
    means = runs.groupby(keys)[["isoscore_star", "metric", "twonn"]].mean()
    # Figure 5: one panel per task, IsoScore* against the task metric, a point per model and λ
    # of I-STAR and the baseline (CosReg left out).
    panels = [ax for ax in drawn["figure5"].axes if ax.get_title() in {"cola", "sst2"}]
    assert sorted(ax.get_title() for ax in panels) == ["cola", "sst2"]
    for ax in panels:
        task = ax.get_title()
        assert ax.get_xlabel() == "IsoScore* (ζ = 0.75)"
        metric = "matthews_correlation" if task == "cola" else "accuracy"
        assert ax.get_ylabel() == f"validation {metric}"
        points = sorted(tuple(c.lines[0].get_xydata()[0]) for c in ax.containers)
        expected = means.xs(task, level="task").drop(index="cosreg", level="regulariser")
        np.testing.assert_allclose(
            points, sorted(zip(expected["isoscore_star"], expected["metric"])), rtol=1e-12
        )
    # Figure 6: bars per model for I-STAR (λ < 0), no regulariser and CosReg.
    ax6 = drawn["figure6"].axes[0]
    assert [t.get_text() for t in ax6.get_xticklabels()] == ["bert", "distil"]
    assert ax6.get_ylabel() == "mean task metric over 2 task(s)"
    assert [c.get_label() for c in ax6.containers] == ["I-STAR (λ < 0)", "no regulariser", "CosReg"]
    baseline = means.xs(("none", 0), level=("regulariser", "lambda"))["metric"]
    heights = [bar.get_height() for bar in ax6.containers[1]]
    assert heights == pytest.approx([baseline["bert"].mean(), baseline["distil"].mean()])
    # Figure 7: TwoNN against λ on SST-2, one line per model, the baseline at λ = 0.
    ax7 = drawn["figure7"].axes[0]
    assert ax7.get_xlabel() == "λ (I-STAR; 0 = no regulariser)"
    assert ax7.get_ylabel() == "TwoNN ID, sst2 validation"
    for container, model in zip(ax7.containers, ("bert", "distil")):
        x, y = container.lines[0].get_xdata(), container.lines[0].get_ydata()
        sst2 = means.xs((model, "sst2"), level=("model", "task"))
        twonn = sst2.drop(index="cosreg", level="regulariser").reset_index().sort_values("lambda")
        assert list(x) == list(twonn["lambda"]) == [-5, -1, 0, 1, 5]  # I-STAR and the baseline
        assert list(y) == pytest.approx(list(twonn["twonn"]))


def test_study_outputs_follow_the_config():
    section = Istar.model_validate({"models": ["bert"], "tasks": ["sst2"], "figure7_task": "sst2"})
    assert "results/istar/figure7.png" in study_outputs(section)
    elsewhere = section.model_copy(update={"tasks": ["rte"]})
    assert "results/istar/figure7.png" not in study_outputs(elsewhere)
    assert study_outputs(None) == []

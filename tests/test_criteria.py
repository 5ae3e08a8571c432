"""The cluster criteria of the extension study (isotropy.metrics.criteria) against independent
references: scikit-learn for Caliński–Harabasz and Davies–Bouldin, a brute-force double loop
for Dunn (its bad input: tests/test_metrics.py, their registry entries:
tests/test_metric_registry.py); their place in a main-study trace when configured."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics
import torch
from sklearn import datasets
from sklearn.metrics import calinski_harabasz_score, davies_bouldin_score
from test_optimize import word_task
from tiny_workflow import choices

from isotropy import metrics
from isotropy.configuration.optimisation import Optimisation
from isotropy.configuration.studies import Extensions
from isotropy.metrics import cluster_layout, clusters, registry
from isotropy.metrics.criteria import (
    calinski_harabasz,
    calinski_harabasz_tensor,
    davies_bouldin,
    davies_bouldin_tensor,
    dunn,
    dunn_brute_force,
    dunn_tensor,
)
from isotropy.optimize import OptimisationSettings, build_problem, run_optimisation


def clustered(n=120, d=6, k=3, seed=0, spread=1.0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    centres = rng.standard_normal((k, d)) * 3
    return centres[labels] + spread * rng.standard_normal((n, d)), labels


# Real data shipped with scikit-learn (no download): measured flowers, wine chemistry, 8x8 digits.
# And seven synthetic clusters, shuffled (the layout sorts; the input need not be sorted).
REAL = {"iris": datasets.load_iris, "wine": datasets.load_wine, "digits": datasets.load_digits}
REAL["7 shuffled clusters"] = lambda return_X_y: shuffled(*clustered(seed=2, k=7))


def shuffled(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(2).permutation(len(y))
    return x[order], y[order]


@pytest.mark.parametrize("name", REAL)
def test_calinski_harabasz_and_davies_bouldin_equal_scikit_learn_on_real_data(name):
    x, y = REAL[name](return_X_y=True)
    names = np.array([f"class {v}" for v in y])  # labels of any kind, as the workflow's
    assert calinski_harabasz(x, names) == pytest.approx(calinski_harabasz_score(x, y), rel=1e-9)
    assert davies_bouldin(x, names) == pytest.approx(davies_bouldin_score(x, y), rel=1e-9)
    # the optimisation hands float32 tensors: still scikit-learn's value to float32 precision
    points = torch.from_numpy(x).float()
    assert calinski_harabasz(points, y) == pytest.approx(calinski_harabasz_score(x, y), rel=1e-5)
    assert davies_bouldin(points, y) == pytest.approx(davies_bouldin_score(x, y), rel=1e-5)


def test_calinski_harabasz_and_davies_bouldin_are_implemented_once(monkeypatch):
    # The package's CH and DB are the tensor functions the optimisation records, not a second
    # copy that calls scikit-learn: with scikit-learn's scores broken they still answer.
    def broken(*args, **kwargs):
        raise AssertionError("the package called scikit-learn for a cluster index")

    monkeypatch.setattr(sklearn.metrics, "calinski_harabasz_score", broken)
    monkeypatch.setattr(sklearn.metrics, "davies_bouldin_score", broken)
    x, y = clustered(seed=4, k=3)
    layout = cluster_layout(y)
    points = torch.from_numpy(x)
    assert metrics.calinski_harabasz(x, y) == float(calinski_harabasz_tensor(points, layout))
    assert metrics.davies_bouldin(x, y) == float(davies_bouldin_tensor(points, layout))
    assert not hasattr(clusters, "calinski_harabasz") and not hasattr(clusters, "davies_bouldin")


@pytest.mark.parametrize("seed,k,block", [(0, 2, None), (3, 4, 7), (5, 5, 1)])
def test_dunn_equals_a_brute_force_double_loop(seed, k, block):
    x, y = clustered(n=60, seed=seed, k=k, spread=2.0)
    expected = dunn_brute_force(x, y)
    assert 0 < expected < np.inf
    streamed = dunn_tensor(torch.from_numpy(x), cluster_layout(y), block_size=block)
    assert float(streamed) == pytest.approx(expected, rel=1e-12)
    assert dunn(x, [f"c{v}" for v in y]) == pytest.approx(expected, rel=1e-12)


def test_a_configured_trace_records_the_criteria_as_scikit_learn_computes_them():
    problem = build_problem(*word_task(n=60, dim=5))
    cpu = torch.device("cpu")
    plain, _ = run_optimisation(problem, OptimisationSettings(updates=3, progress=False), cpu)
    assert "dunn" not in plain.columns
    criteria = ("dunn", "calinski_harabasz", "davies_bouldin")
    settings = OptimisationSettings(updates=3, progress=False, extra_metrics=criteria)
    trace, summary = run_optimisation(problem, settings, cpu)
    assert list(trace.columns[-3:]) == ["dunn", "calinski_harabasz", "davies_bouldin"]
    pd.testing.assert_frame_equal(trace[plain.columns], plain)  # the criteria change nothing else
    x, y = problem.vectors.astype(np.float64), problem.targets  # step 0: the untouched table
    calinski_harabasz = calinski_harabasz_score(x, y)
    assert trace["calinski_harabasz"].iloc[0] == pytest.approx(calinski_harabasz, rel=1e-5)
    assert trace["davies_bouldin"].iloc[0] == pytest.approx(davies_bouldin_score(x, y), rel=1e-5)
    assert trace["dunn"].iloc[0] == pytest.approx(dunn_brute_force(x, y), rel=1e-5)
    assert summary["settings"]["extra_metrics"] == ["dunn", "calinski_harabasz", "davies_bouldin"]


def test_the_main_study_records_the_criteria_only_when_configured(tmp_path):
    from isotropy.workflow import config as workflow_config
    from isotropy.workflow import targets

    root = Path(__file__).resolve().parents[1]
    load = workflow_config.load_config
    plain = load([root / "config.yaml"]).settings
    assert "extra_metrics" not in targets.optimisation_settings(plain, "main", "polarity", 0)
    overlay = tmp_path / "criteria.yaml"
    overlay.write_text("main:\n  extra_metrics: [dunn, davies_bouldin]\n")
    asked = load([root / "config.yaml", overlay]).settings
    settings = targets.optimisation_settings(asked, "main", "polarity", 0)
    assert OptimisationSettings(**settings).extra_metrics == ("dunn", "davies_bouldin")
    overlay.write_text("main:\n  extra_metrics: [dunno]\n")
    with pytest.raises(workflow_config.ConfigError, match="dunno"):
        workflow_config.load_config([str(root / "config.yaml"), str(overlay)])


def criteria_problems(found: dict[str, list[str]], criteria: tuple[str, ...]) -> list[str]:
    """Where the configuration names the cluster criteria otherwise than ``criteria``."""
    return [f"{where}: {names}" for where, names in found.items() if tuple(names) != criteria]


def test_the_configuration_names_the_registry_criteria_in_its_order():
    # The models' Literal is a copy of the registry (the workflow parses without the metrics):
    # kept equal here.
    found = {
        "optimisation.extra_metrics": choices(Optimisation, "extra_metrics"),
        "extensions.criteria": choices(Extensions, "criteria"),
        "extensions.criteria default": Extensions.default("criteria"),
    }
    assert criteria_problems(found, registry.cluster_criteria()) == []
    # and the check says no when they part: a criterion the registry gains, or a reordering
    assert len(criteria_problems(found, (*registry.cluster_criteria(), "gap"))) == 3
    reordered = tuple(reversed(registry.cluster_criteria()))
    assert len(criteria_problems(found, reordered)) == 3

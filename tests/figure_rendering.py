"""Every figure of a finished workflow run drawn again from its stored results, as Figure objects:
the package functions the plot steps call, on the same files, with the run's own labels (the
configuration beside the work folder, as tests/conftest.py's tiny run lays it out)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from isotropy import standins as comparison
from isotropy.configuration import Config
from isotropy.plots import geometry as geometry_plots
from isotropy.plots import istar as istar_plots
from isotropy.plots.main import metric_curves, setup_label, silhouette_vs_isoscore
from isotropy.traces import read_traces
from isotropy.workflow import targets


def _traces(workdir: Path, config: Config, study: str) -> pd.DataFrame | None:
    runs = targets.table_runs(config, study, root=str(workdir))
    files = [
        workdir / f"results/{study}/{r['encoder']}/{r['dataset']}/seed{r['seed']}/trace.parquet"
        for r in runs
    ]
    if not runs or not all(f.is_file() for f in files):
        return None
    return read_traces(files, [{"encoder": r["encoder"], "dataset": r["dataset"]} for r in runs])


def tiny_run_figures(workdir: Path, config_path: Path | None = None) -> dict[str, object]:
    """Figure name → matplotlib Figure for every figure the run in ``workdir`` made."""
    workdir = Path(workdir)
    config = yaml.safe_load(Path(config_path or workdir.parent / "config.yaml").read_text())
    settings = Config.model_validate(config)
    stand_ins = comparison.describe_stand_ins(settings, config.get("mirror"))
    labels = comparison.encoder_labels(settings, stand_ins)
    figures: dict[str, object] = {}
    traces = _traces(workdir, settings, "main")
    if traces is not None:
        correlations = pd.read_csv(workdir / "results/main/correlations.csv")
        for frame in (traces, correlations):
            pairs = zip(frame["dataset"], frame["encoder"])
            frame["dataset"] = [setup_label(d, e, labels) for d, e in pairs]
        figures["main/figure2"] = metric_curves(traces, panel="dataset")
        figures["main/figure3"] = silhouette_vs_isoscore(traces, "dataset", correlations)
    traces = _traces(workdir, settings, "glue")
    if traces is not None:
        figures["glue/figure4"] = metric_curves(traces, panel="dataset", row="encoder")
    runs_csv = workdir / "results/istar/runs.csv"
    if runs_csv.is_file():
        runs, istar = pd.read_csv(runs_csv), config["istar"]
        figures["istar/figure5"] = istar_plots.figure5(runs)[0]
        selection = istar.get("figure6_selection", "best")
        figures["istar/figure6"] = istar_plots.figure6(runs, selection)[0]
        figures["istar/figure7"] = istar_plots.figure7(runs, istar.get("figure7_task", "sst2"))[0]
    geometry = workdir / "results/geometry"
    label = stand_ins.get("word_vectors_label")
    for name, draw in (
        ("cosine_by_layer", geometry_plots.plot_cosine_by_layer),
        ("lid", geometry_plots.plot_lid_by_layer),
        ("sts", geometry_plots.plot_sts),
    ):
        if (geometry / f"{name}.csv").is_file():
            table = geometry_plots.name_static_rows(pd.read_csv(geometry / f"{name}.csv"), label)
            figures[f"geometry/{name}"] = draw(table)
    for path in sorted(geometry.glob("*/*/seed*/pca_view.csv")):
        model, corpus = path.parts[-4], path.parts[-3]
        title = f"{model} on {corpus}"
        figures[f"geometry/{model}/pca_view"] = geometry_plots.plot_pca_view(
            pd.read_csv(path), title
        )
        frequency = path.parents[1] / "token_frequency.csv"
        if frequency.is_file():  # read as scripts/geometry_plot_token_views.py reads them
            view = pd.read_csv(path, keep_default_na=False)
            counts = pd.read_csv(frequency, keep_default_na=False)
            figures[f"geometry/{model}/token_views"] = geometry_plots.plot_token_views(
                view, counts, title
            )
    return figures

"""The committed runs of the direct-optimisation studies (main, appendix A's GLUE), judged again
by the verdict code in force, so that a page says what that code says of the run."""

from __future__ import annotations

import gzip
import io
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import studies
from isotropy.committed.record import DATA, Checksums, made_by
from isotropy.configuration import Config
from isotropy.intake import MAX_TABLE_BYTES, read_csv, read_inside, read_yaml
from isotropy.io import checked_record, commit_files
from isotropy.standins import StandIns, workflow_stand_ins
from isotropy.traces import read_trace
from isotropy.verdicts.claims import check_claims
from isotropy.verdicts.comparison import compare, read_published
from isotropy.verdicts.measurements import measure
from isotropy.verdicts.measurements.optimisation import table_names

KEYS = ("encoder", "dataset", "seed")
# What the verdicts read of each study's configuration (its protocol, models and stand-ins).
CONFIG_KEYS = {
    "main": ("main", "encoders", "datasets", "word_vectors", "pos_source", "supersense_source"),
    "glue": ("glue", "encoders", "models"),
}
WHAT = {
    "main": "`make run` on the offline mirror: the main study at the paper's protocol",
    "glue": "target glue_study on the offline mirror (config.yaml + config/offline.yaml): "
    "appendix A at its configured scale",
}


def checksums(study: str, claims: bool = False) -> Checksums:
    """The study's record and the files it lists: its tables in the verdicts' order, its traces,
    and with ``claims`` its claims judged when copied."""
    counts, correlations, _ = (DATA / f"{name}.csv" for name in table_names(study))
    files = (counts, correlations, DATA / f"{study}_traces.csv.gz")
    return Checksums(DATA / f"{study}_run.json", files + (DATA / f"{study}_claims.csv",) * claims)


def copy(
    study: str,
    root: Path,
    sources: list[Path],
    run: Mapping[str, Any],
    effective_config: Path,
    into: Checksums | None = None,
) -> dict[str, Any]:
    """Copy ``results/<study>`` in with record ``into`` (its claims judged if it lists them);
    ``run``: facts no file holds (start, end, printed estimate, machine, ``what`` of an overlay)."""
    (results,) = sources
    record = into or checksums(study)
    counts, correlations, traces_file, *claims_file = record.files
    names = [file.name.removeprefix(f"{study}_") for file in (counts, correlations)]
    if missing := [name for name in names if not os.path.lexists(results / name)]:
        raise FileNotFoundError(f"{results / missing[0]} is missing: the run has not finished")
    runs = sorted(  # each run's <encoder>/<dataset>/seed<k>/trace.parquet, by key
        results.glob("*/*/seed*/trace.parquet"),
        key=lambda t: (t.parts[-4], t.parts[-3], int(t.parts[-2].removeprefix("seed"))),
    )
    if not runs:
        raise FileNotFoundError(f"no traces below {results}: run the study first")
    config = read_yaml(Path(effective_config).parent, Path(effective_config).name)
    if not isinstance(config.get(study), dict):
        raise ValueError(f"{effective_config} has no {study} section: not the {study} study's run")
    traces = pd.concat(  # each checked against its provenance record
        [read_trace(t).assign(encoder=t.parts[-4], dataset=t.parts[-3]) for t in runs],
        ignore_index=True,
    )
    traces = traces[[*KEYS, *(c for c in traces.columns if c not in KEYS)]]
    # what the verdicts read of the run's configuration; of named encoders (GLUE), theirs
    settings = {key: config[key] for key in CONFIG_KEYS[study] if key in config}
    if "encoders" in config[study]:
        settings["encoders"] = {e: config["encoders"][e] for e in config[study]["encoders"]}
        models = {entry.get("model") for entry in settings["encoders"].values()}
        settings["models"] = {m: v for m, v in (config.get("models") or {}).items() if m in models}
    # through the door: a link out of the run, a pipe, is refused, never copied in
    tables = [read_inside(results, name, MAX_TABLE_BYTES) for name in names]
    files: dict[Path, bytes | Path] = {counts: tables[0], correlations: tables[1]}
    buffer = io.BytesIO()  # no name, no time stamp: equal text gives equal bytes
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as out:
        out.write(traces.to_csv(index=False).encode("utf-8"))
    files[traces_file] = buffer.getvalue()
    facts = {
        "what": run.get("what", WHAT[study]),  # the facts name an overlay where one ran
        # the one commit, package set and device the traces' provenance records name
        **made_by(runs, results.parent.parent, lambda r: [r.get("device"), r.get("hardware")]),
        "run": {key: value for key, value in run.items() if key != "what"},  # said once, above
        "config": settings,
        "stand_ins": workflow_stand_ins(Config.model_validate(config)),
    }
    if claims_file:
        frames = [*(pd.read_csv(io.BytesIO(data)) for data in tables), traces]
        judged = judged_claims(study, dict(zip(table_names(study), frames)), facts)
        files[claims_file[0]] = judged.to_csv(index=False).encode("utf-8")
    return commit_files(root, record.path, files, facts)


def committed_tables(study: str, root: str | os.PathLike = ".") -> dict[str, pd.DataFrame]:
    """The committed run's tables, by the names the verdicts read."""
    files = zip(table_names(study), checksums(study).files)
    return {name: read_csv(root, str(file)) for name, file in files}


def judged_claims(study: str, tables, record: Mapping[str, Any], claims=True) -> pd.DataFrame:
    """The study's claims (its record's), or without ``claims`` its rows of
    config/published_values.csv, judged on ``tables`` by the verdict code in force."""
    stand_ins = StandIns(**record["stand_ins"])
    measured = measure(tables, record["config"], stand_ins, studies.table_measures())
    if claims:
        return check_claims(measured, {study}, {study: studies.measured_claims()[study]})
    table = compare(read_published(), measured, {study})
    return table[table["study"] == study].reset_index(drop=True)


def committed_claims(study: str, root: str | os.PathLike = ".", claims=True) -> pd.DataFrame:
    """:func:`judged_claims` now, on the committed run; ``claims=False``: its verdicts."""
    record = checked_record(root, checksums(study).path)
    return judged_claims(study, committed_tables(study, root), record, claims)


def signed(value: Any, digits: int = 4) -> str:
    """A number as the pages print it: signed, ``digits`` decimals, a true minus sign."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return "–" if not math.isfinite(number) else f"{number:+.{digits}f}".replace("-", "−")


def seed_ends(traces: pd.DataFrame) -> pd.DataFrame:
    """Per setup: its seeds, steps recorded, both metrics' ends, once where every seed's agree."""
    runs = traces.sort_values("step").groupby(list(KEYS))
    ends = {"steps recorded": runs.size().astype(str)}
    for column, name in (("isoscore", "IsoScore"), ("silhouette", "silhouette")):
        for end, at in (("first", 0), ("last", -1)):
            ends[f"{name} {end}"] = runs[column].agg(lambda run, at=at: signed(run.iloc[at]))
    shown = pd.DataFrame(ends).reset_index("seed").astype(str).groupby(list(KEYS[:2]))
    shown = shown.agg(lambda values: values.iloc[0] if values.nunique() == 1 else ", ".join(values))
    shown.index = [f"{encoder}/{dataset}" for encoder, dataset in shown.index]
    return shown.rename(columns={"seed": "seeds"}).rename_axis("setup").reset_index()


def seeds_vary(study: str, traces: pd.DataFrame) -> str:
    """What the study's claims say its seeds vary; in how many setups step 0 is the same."""
    said = {claim.seeds_vary for claim in studies.BY_NAME[study].claims} - {""}
    first = traces[traces["step"] == 0].groupby(list(KEYS[:2]))[["isoscore", "silhouette"]]
    same = (first.nunique() == 1).all(axis=1)
    return f"{'; '.join(sorted(said))}; step 0 equal across seeds in {same.sum()} of {len(same)}"

"""The committed runs of the direct-optimisation studies (the main study, appendix A's GLUE):
a finished run's traces, count and correlation tables with their record, judged again by the
verdict code in force, so that a page says what that code says of the run."""

from __future__ import annotations

import gzip
import io
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import paths, studies
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


def traces_file(study: str) -> Path:
    return DATA / f"{study}_traces.csv.gz"


def table_file(study: str, kind: str) -> Path:
    """A study's committed ``counts`` or ``correlations`` table."""
    tables = {"counts": paths.COUNT_TABLES, "correlations": paths.CORRELATION_TABLES}
    return DATA / f"{study}_{tables[kind][study]}.csv"


def run_file(study: str) -> Path:
    return DATA / f"{study}_run.json"


def claims_file(study: str) -> Path:
    return DATA / f"{study}_claims.csv"


def checksums(study: str, claims: bool = False) -> Checksums:
    """The study's record and the files it lists, its tables in the verdicts' order."""
    files = [table_file(study, "counts"), table_file(study, "correlations"), traces_file(study)]
    return Checksums(run_file(study), tuple(files + [claims_file(study)] * claims))


def _gzip_bytes(text: str) -> bytes:
    """``text`` gzip-compressed with no name and no time stamp, so equal text gives equal bytes."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as out:
        out.write(text.encode("utf-8"))
    return buffer.getvalue()


def _settings(study: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """What the verdicts read of the run's configuration; of named encoders (GLUE), theirs."""
    kept = {key: config[key] for key in CONFIG_KEYS[study] if key in config}
    if "encoders" in config[study]:
        kept["encoders"] = {e: config["encoders"][e] for e in config[study]["encoders"]}
        models = {entry.get("model") for entry in kept["encoders"].values()}
        kept["models"] = {m: v for m, v in (config.get("models") or {}).items() if m in models}
    return kept


def copy(
    study: str,
    root: Path,
    sources: list[Path],
    run: Mapping[str, Any],
    effective_config: Path,
    into: Checksums | None = None,
    claims: bool = False,
) -> dict[str, Any]:
    """Copy a finished run's ``results/<study>`` (the one source) beside the docs with its
    record (:attr:`~isotropy.committed.record.CommittedRun.copy`); ``run``: facts
    no file holds (start, end, printed estimate, machine, ``what`` where an overlay narrowed it);
    ``claims``: with the study's claims judged on the copied tables."""
    (results,) = sources
    counts = results / f"{paths.COUNT_TABLES[study]}.csv"
    correlations = results / f"{paths.CORRELATION_TABLES[study]}.csv"
    for needed in (counts, correlations):
        if not os.path.lexists(needed):
            raise FileNotFoundError(f"{needed} is missing: the run has not finished")
    runs = sorted(  # each run's <encoder>/<dataset>/seed<k>/trace.parquet, by key
        results.glob("*/*/seed*/trace.parquet"),
        key=lambda t: (t.parts[-4], t.parts[-3], int(t.parts[-2].removeprefix("seed"))),
    )
    if not runs:
        raise FileNotFoundError(f"no traces below {results}: run the study first")
    config = read_yaml(Path(effective_config).parent, Path(effective_config).name)
    if not isinstance(config.get(study), dict):
        raise ValueError(f"{effective_config} has no {study} section: not the {study} study's run")
    frames = [  # each checked against its provenance record
        read_trace(trace).assign(encoder=trace.parts[-4], dataset=trace.parts[-3]) for trace in runs
    ]
    traces = pd.concat(frames, ignore_index=True)
    order = ["encoder", "dataset", "seed"] + [c for c in traces.columns if c not in KEYS]
    traces = traces[order]
    files: dict[Path, bytes | Path] = {
        traces_file(study): _gzip_bytes(traces.to_csv(index=False)),
        # through the door: a link out of the run, a pipe, is refused, never copied in
        table_file(study, "counts"): read_inside(results, counts.name, MAX_TABLE_BYTES),
        table_file(study, "correlations"): read_inside(results, correlations.name, MAX_TABLE_BYTES),
    }
    facts = {
        "what": run.get("what", WHAT[study]),  # the facts name an overlay where one ran
        # the one commit, package set and device the traces' provenance records name
        **made_by(runs, results.parent.parent, lambda r: [r.get("device"), r.get("hardware")]),
        "run": {key: value for key, value in run.items() if key != "what"},  # said once, above
        "config": _settings(study, config),
        "stand_ins": workflow_stand_ins(Config.model_validate(config)),
    }
    if claims:
        copied = [files[table_file(study, kind)] for kind in ("counts", "correlations")]
        tables = [pd.read_csv(io.BytesIO(data)) for data in copied if isinstance(data, bytes)]
        tables.append(traces)
        judged = judged_claims(study, dict(zip(table_names(study), tables)), facts)
        files[claims_file(study)] = judged.to_csv(index=False).encode("utf-8")
    return commit_files(root, run_file(study), files, facts)


def committed_tables(study: str, root: str | os.PathLike = ".") -> dict[str, pd.DataFrame]:
    """The committed run's tables, by the names the verdicts read."""
    files = zip(table_names(study), checksums(study).files)
    return {name: read_csv(root, str(file)) for name, file in files}


def _measured(tables, record: Mapping[str, Any]) -> pd.DataFrame:
    """The measurements of ``tables``, with the configuration and stand-ins of ``record``."""
    return measure(
        tables, record["config"], StandIns(**record["stand_ins"]), studies.table_measures()
    )


def judged_claims(study: str, tables, record: Mapping[str, Any]) -> pd.DataFrame:
    """The study's claims (its record's) judged on ``tables`` by the verdict code in force."""
    claims = {study: studies.measured_claims()[study]}
    return check_claims(_measured(tables, record), {study}, claims)


def verdicts(study: str, root: str | os.PathLike = ".") -> pd.DataFrame:
    """The study's rows of config/published_values.csv judged on the committed run."""
    record = checked_record(root, run_file(study))
    table = compare(read_published(), _measured(committed_tables(study, root), record), {study})
    return table[table["study"] == study].reset_index(drop=True)


def committed_claims(study: str, root: str | os.PathLike = ".") -> pd.DataFrame:
    """The study's claims judged now, on the committed run (:func:`judged_claims`)."""
    record = checked_record(root, run_file(study))
    return judged_claims(study, committed_tables(study, root), record)


def signed(value: Any, digits: int = 4) -> str:
    """A number as the pages print it: signed, ``digits`` decimals, a true minus sign."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return "–" if not math.isfinite(number) else f"{number:+.{digits}f}".replace("-", "−")


def _once(values) -> str:
    """One value where every seed prints the same, else each seed's in seed order."""
    shown = [str(v) for v in values]
    return shown[0] if len(set(shown)) == 1 else ", ".join(shown)


def seed_ends(traces: pd.DataFrame) -> pd.DataFrame:
    """Per setup: its seeds, steps recorded, both metrics' ends (:func:`_once`)."""
    rows = []
    for (encoder, dataset), setup in traces.sort_values("step").groupby(list(KEYS[:2])):
        runs = [run for _, run in setup.groupby("seed")]
        row = {"setup": f"{encoder}/{dataset}", "seeds": _once(r["seed"].iloc[0] for r in runs)}
        row["steps recorded"] = _once(len(r) for r in runs)
        for column, name in (("isoscore", "IsoScore"), ("silhouette", "silhouette")):
            for end, at in (("first", 0), ("last", -1)):
                row[f"{name} {end}"] = _once(signed(r[column].iloc[at]) for r in runs)
        rows.append(row)
    return pd.DataFrame(rows)


def seeds_vary(study: str, traces: pd.DataFrame) -> str:
    """What the study's claims say its seeds vary; in how many setups step 0 is the same."""
    said = {claim.seeds_vary for claim in studies.BY_NAME[study].claims} - {""}
    first = traces[traces["step"] == 0].groupby(list(KEYS[:2]))[["isoscore", "silhouette"]]
    same = (first.nunique() == 1).all(axis=1)
    return f"{'; '.join(sorted(said))}; step 0 equal across seeds in {same.sum()} of {len(same)}"

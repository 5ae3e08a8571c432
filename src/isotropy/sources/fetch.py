"""Fetching a whole source into ``resources/raw/<source>/``: from a mirror, the hub, or its URLs.

One download reads top-down: :func:`fetch_source` fetches the inputs (:func:`_fetch_inputs`:
mirror files checked against their pins, a hub split, or URLs streamed by
:func:`~isotropy.sources.transfer.download_file`), lays them out (:mod:`isotropy.sources.layouts`)
in a staging folder, swaps them into the source's folder, and writes the manifest.

Beside the raw files, ``manifest.json`` (the Snakemake output of the download rule) records where
the data came from and the sha256 of every downloaded and every stored file. It is written last,
so its presence means the folder is complete; a failure leaves neither the manifest nor half a
file.

Reading a fetched word-vector source: its one word2vec file, text or binary, maybe gzipped.
"""

from __future__ import annotations

import dataclasses
import errno
import gzip
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from isotropy.io import DiskFullError, sha256_file, write_json
from isotropy.paths import MANIFEST_NAME
from isotropy.sources.crosscopy import compare_copy
from isotropy.sources.layouts import ExtractionLimits, Fetched, MemberPins, layout_of
from isotropy.sources.lock import (
    TRUST_LOCK,
    TRUST_PUBLISHED,
    check_locked,
    lock_path,
    record_downloads,
)
from isotropy.sources.mirror import (
    check_mirror_file,
    config_pins_of_mirror_files,
    mirror_path_problem,
    read_mirror_manifest,
    source_unavailable,
)
from isotropy.sources.transfer import (
    DOWNLOAD_DEFAULTS,
    HUB_FILE,
    ArchiveError,
    DownloadError,
    check_digest,
    copy_local,
    download_file,
    git_blob_id,
    md5_file,
    new_session,
    url_file_name,
)

log = logging.getLogger(__name__)
MIRROR_TRUST = {"MANIFEST.tsv": "the mirror's MANIFEST.tsv", "config": TRUST_PUBLISHED}


def fetch_source(
    name: str,
    params: Mapping[str, Any],
    raw_dir: str | os.PathLike,
    *,
    config: Mapping[str, Any] | None = None,
    lock_file: str | os.PathLike | None = None,
    retries: int = 5,
    backoff: float = 2.0,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Fetch source ``name`` (``params`` as made by :func:`source_params`) into ``raw_dir``.

    Returns the manifest, also written to ``raw_dir/manifest.json`` once every file is in place.
    On failure nothing new is left in ``raw_dir``. ``config`` (the workflow's configuration, when
    known) lets a source the mirror lacks be reported as at parse time, with the GLUE tasks the
    mirror holds, and names the sources lock (``lock_file`` overrides it): a downloaded file
    that no published pin checks is compared with the lock, and recorded there on first use.
    """
    raw_dir = Path(raw_dir)
    layout = layout_of(name, params["kind"])
    lock = Path(lock_file) if lock_file is not None else lock_path(config)
    raw_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=raw_dir))
    try:
        fetched_dir, staging = work / "fetched", work / "staging"
        fetched_dir.mkdir()
        staging.mkdir()
        origin, items, inputs = _fetch_inputs(
            name,
            params,
            fetched_dir,
            sources=(config or {}).get("sources"),
            lock=lock,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
        )
        files = _lay_out(layout, items, origin, staging, name)
        _check_members(name, items, inputs, origin)
        records = [_file_record(staging, rel) for rel in files]
        checks = _cross_copies(name, params, inputs, records, origin)
        _lock_inputs(name, lock, inputs)
        _replace_contents(raw_dir, staging, files, keep=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    manifest = {
        "source": name,
        "kind": params["kind"],
        "origin": origin,
        "mirror": str(Path(params["mirror"])) if params.get("mirror") else None,
        "inputs": inputs,
        "files": records,
        **({"cross_copy": checks} if checks else {}),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_json(raw_dir / MANIFEST_NAME, manifest)
    log.info("source %s: %d file(s) from %s in %s", name, len(records), origin, raw_dir)
    return manifest


def _check_members(name: str, items: list[Fetched], inputs: list[dict], origin: str) -> None:
    """Every pinned archive member was read and matched (the layout checked each as it read it)."""
    for item, entry in zip(items, inputs):
        if item.members is None or origin != "url":
            continue
        missing = item.members.unchecked()
        if missing:
            raise ArchiveError(
                f"archive {item.name} of source {name!r} holds no member {', '.join(missing)}, "
                f"which sources.{name}.members pins; the archive is not the published one"
            )
        entry["members"] = dict(item.members.checked)
        entry["checked_against"] = [*entry.get("checked_against", []), "members"]


def _cross_copies(
    name: str, params: Mapping[str, Any], inputs: list[dict], records: list[dict], origin: str
) -> list[dict[str, Any]]:
    """Each configured second public copy compared with what was fetched (downloads only)."""
    specs = params.get("cross_copy") or []
    if origin != "url":
        return []
    return [compare_copy(name, spec, inputs, records) for spec in specs]


def _lock_inputs(name: str, lock: Path, inputs: list[dict]) -> None:
    """Record the downloads that rest on the lock (first use, or a relock asked for)."""
    locked = [entry for entry in inputs if entry.get("trust") == TRUST_LOCK]
    if not locked:
        return
    entries = record_downloads(lock, name, locked)
    for entry, record in zip(locked, entries):
        entry["lock"] = {"file": str(lock), **record}
        if record.get("replaced") and record["replaced"][0].get("relocked") == record["locked"]:
            log.warning(
                "source %s: RELOCKED %s: sha256 %s accepted in %s (was %s)",
                name,
                entry["url"],
                record["sha256"],
                lock,
                record["replaced"][0]["sha256"],
            )


def _lay_out(layout: Any, items: list[Fetched], origin: str, staging: Path, name: str) -> list[str]:
    """The source's raw files written into ``staging``; a full disk names the source's folder."""
    try:
        return layout(items, origin, staging)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT) or isinstance(error, DiskFullError):
            raise
        written = sum(p.stat().st_size for p in staging.rglob("*") if p.is_file())
        full = DiskFullError(staging.parent.parent, written, error)
        full.strerror = f"laying out source {name!r}: {full.strerror}"
        raise full from error


def _fetch_inputs(
    name: str,
    params: Mapping[str, Any],
    fetched_dir: Path,
    *,
    sources: Mapping[str, Any] | None,
    lock: Path,
    **transfer: Any,
) -> tuple[str, list[Fetched], list[dict]]:
    """(origin, fetched items bound to the extraction limits and member pins, their manifest
    entries)."""
    if params.get("mirror"):
        origin = "mirror"
        items, inputs = _from_mirror(name, params, Path(params["mirror"]), fetched_dir, sources)
    elif params["kind"] == "hub":
        origin = "url"
        items, inputs = _from_hub(name, params, fetched_dir)
    else:
        origin = "url"
        items, inputs = _from_urls(params, fetched_dir, lock, **transfer)
    limits = ExtractionLimits(
        params.get("max_extracted_bytes", DOWNLOAD_DEFAULTS["max_extracted_bytes"]),
        params.get("max_archive_members", DOWNLOAD_DEFAULTS["max_archive_members"]),
    )
    pins = params.get("members") or None
    bound = [
        dataclasses.replace(
            item, limits=limits, members=MemberPins(name, pins) if pins is not None else None
        )
        for item in items
    ]
    return origin, bound, inputs


def _file_record(staging: Path, rel: str) -> dict[str, Any]:
    path = staging / rel
    return {"path": rel, "bytes": path.stat().st_size, "sha256": sha256_file(path)}


def _from_mirror(
    name: str,
    params: Mapping[str, Any],
    mirror: Path,
    fetched_dir: Path,
    sources: Mapping[str, Any] | None = None,
) -> tuple[list[Fetched], list[dict]]:
    """Copy the source's mirror files, each checked against MANIFEST.tsv and any config pin."""
    rels = params.get("mirror_files") or []
    if not rels:
        raise FileNotFoundError(
            f"source {name!r} lists no mirror files in config 'sources.{name}.mirror'"
        )
    confined = [problem for rel in rels if (problem := mirror_path_problem(rel)) is not None]
    if confined:
        raise ValueError(f"sources.{name}.mirror: {confined[0]}")
    # The same check as at parse time (check_sources_available): the mirror may have changed since.
    problem = source_unavailable(name, params["kind"], {"mirror": rels}, mirror, sources)
    if problem is not None:
        raise FileNotFoundError(problem)
    manifest = read_mirror_manifest(mirror)
    config_pins = config_pins_of_mirror_files(name, params, mirror)
    items, inputs = [], []
    for rel in rels:
        # Copy first, then hash the copy: what is checked is exactly what is parsed.
        local = fetched_dir / Path(rel).name
        digest = copy_local(mirror / rel, local, None, f"mirror file {mirror / rel}")
        pinned_by = check_mirror_file(
            name, rel, digest, mirror, manifest, config_pins.get(rel), params, local.stat().st_size
        )
        items.append(Fetched(rel, local))
        inputs.append(
            {
                "mirror_path": rel,
                "sha256": digest,
                "pinned": bool(pinned_by),
                "pinned_by": pinned_by,
                "trust": " and ".join(MIRROR_TRUST[by] for by in pinned_by) or "unverified",
            }
        )
    return items, inputs


def _from_hub(
    name: str, params: Mapping[str, Any], fetched_dir: Path
) -> tuple[list[Fetched], list[dict]]:
    """One split of a Hugging Face hub data set (``datasets``; needs the hub or its cache)."""
    import datasets  # Hugging Face's, heavy: loaded only when a hub split is fetched

    hub = params.get("hub") or {}
    if not hub.get("path") or not hub.get("split"):
        raise ValueError(
            f"source {name!r} of kind hub needs sources.{name}.hub.path and .split in config.yaml"
        )
    args = (hub["path"], hub["name"]) if hub.get("name") else (hub["path"],)
    log.info("loading %s (split %s) from the Hugging Face hub", "/".join(args), hub["split"])
    dataset = datasets.load_dataset(*args, split=hub["split"], revision=hub.get("revision"))
    local = fetched_dir / HUB_FILE
    dataset.to_parquet(str(local))
    entry = {
        "hub": hub["path"],
        "config": hub.get("name"),
        "split": hub["split"],
        "revision": hub.get("revision"),
        "fingerprint": getattr(dataset, "_fingerprint", None),
        "sha256": sha256_file(local),
        "pinned": True,  # by its hub commit, a published pin (not by the parquet's own bytes)
        "checked_against": ["revision"],
        "trust": TRUST_PUBLISHED,
    }
    return [Fetched(HUB_FILE, local)], [entry]


def _from_urls(
    params: Mapping[str, Any], fetched_dir: Path, lock: Path, **kwargs: Any
) -> tuple[list[Fetched], list[dict]]:
    items, inputs = [], []
    name, count = params["name"], len(params["urls"])
    pins = {
        key: params.get(key) or [None] * count for key in ("sha256", "git_blob", "bytes", "md5")
    }
    with new_session() as session:
        for index, url in enumerate(params["urls"]):
            pin = {key: values[index] for key, values in pins.items()}
            local = fetched_dir / url_file_name(url)
            log.info("downloading %s", url)
            try:
                digest = download_file(
                    url,
                    local,
                    pin["sha256"],
                    session=session,
                    size=pin["bytes"],
                    pin_key=f"sources.{name}.sha256",
                    max_bytes=params.get(
                        "max_extracted_bytes", DOWNLOAD_DEFAULTS["max_extracted_bytes"]
                    ),
                    max_seconds=params.get(
                        "max_download_seconds", DOWNLOAD_DEFAULTS["max_download_seconds"]
                    ),
                    **kwargs,
                )
            except DownloadError as error:
                raise DownloadError(f"source {name!r}: {error}") from error
            items.append(Fetched(local.name, local))
            inputs.append(_checked_download(name, url, local, digest, pin, lock))
    return items, inputs


def _checked_download(
    name: str, url: str, local: Path, digest: str, pin: Mapping[str, Any], lock: Path
) -> dict[str, Any]:
    """One downloaded file's manifest entry, after its git object id and md5 pins, or the lock
    where no published pin checks it (sha256 and size were checked while it arrived)."""
    entry: dict[str, Any] = {"url": url, "sha256": digest, "bytes": local.stat().st_size}
    if pin["git_blob"] is not None:
        entry["git_blob"] = git_blob_id(local)
        check_digest(
            entry["git_blob"],
            pin["git_blob"],
            url,
            pin_key=f"sources.{name}.git_blob",
            what="git object id",
        )
    if pin["md5"] is not None:
        entry["md5"] = md5_file(local)
        check_digest(entry["md5"], pin["md5"], url, pin_key=f"sources.{name}.md5", what="md5")
    published = pin["sha256"] is not None or pin["git_blob"] is not None
    entry["pinned"] = published
    entry["pinned_by"] = ["config"] if pin["sha256"] is not None else []
    entry["checked_against"] = _pins_checked(pin)
    entry["trust"] = TRUST_PUBLISHED if published else TRUST_LOCK
    if not published:
        first = check_locked(lock, name, url, digest, entry["bytes"]) is None
        entry["pinned_by"] = ["lock"]
        entry["checked_against"].append("lock")
        if first:
            log.warning(
                "%s: sha256 %s, %d bytes: no published pin; trusted on first use and recorded in "
                "the sources lock %s (commit it with the project)",
                url,
                digest,
                entry["bytes"],
                lock,
            )
    return entry


def _pins_checked(pin: Mapping[str, Any]) -> list[str]:
    """What a downloaded file was checked against: its config pins, strongest first."""
    return [key for key in ("sha256", "git_blob", "md5", "bytes") if pin.get(key) is not None]


def _replace_contents(raw_dir: Path, staging: Path, files: Sequence[str], keep: Path) -> None:
    """Swap the staged files into ``raw_dir``, removing what an earlier fetch left there."""
    for entry in raw_dir.iterdir():
        if entry == keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for rel in files:
        target = raw_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / rel, target)


def read_source_manifest(raw_dir: str | os.PathLike) -> dict[str, Any]:
    """The manifest of a fetched source; an error if the folder was never (fully) fetched."""

    path = Path(raw_dir) / MANIFEST_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: source folder {raw_dir} was not fetched (run its download rule)"
        )
    return json.loads(path.read_text())


def source_trust(raw_dir: str | os.PathLike) -> dict[str, str]:
    """What each input of a fetched source rests on (its URL, mirror path or hub data set →
    ``published pin``, ``lock (trusted on first use)``, the mirror's MANIFEST.tsv …), for the
    provenance records of what is made from it."""
    trust = {}
    for entry in read_source_manifest(raw_dir).get("inputs") or []:
        label = entry.get("url") or entry.get("mirror_path") or entry.get("hub") or "?"
        trust[str(label)] = str(
            entry.get("trust") or ("pinned" if entry.get("pinned") else "unverified")
        )
    return trust


def source_files(raw_dir: str | os.PathLike) -> list[Path]:
    """The raw files of a fetched source, as listed in its manifest."""
    raw_dir = Path(raw_dir)
    return [raw_dir / record["path"] for record in read_source_manifest(raw_dir)["files"]]


def word_vectors_file(raw_dir: str | os.PathLike) -> Path:
    """The one word2vec file of a fetched word-vector source."""
    files = source_files(raw_dir)
    if len(files) != 1:
        raise ValueError(
            f"word-vector source {raw_dir} should hold one file, its manifest lists {files}"
        )
    return files[0]


def is_word2vec_binary(path: str | os.PathLike) -> bool:
    """Whether a word2vec file is binary, judged from its first vector record.

    The header (``<count> <dim>``) is text in both formats. In the text format the next line is a
    word followed by ``dim`` decimal numbers; in the binary format it is a word followed by raw
    float32 bytes, which never parse as ``dim`` numbers.
    """

    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        header = handle.readline()
        first = handle.readline(1 << 20)
    fields = header.split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise ValueError(
            f"{path}, line 1: expected a word2vec header '<count> <dim>', found {header[:80]!r}"
        )
    dim = int(fields[1])
    parts = first.split()
    if len(parts) == dim + 1:
        try:
            [float(x) for x in parts[-dim:]]
            return False
        except ValueError:
            pass
    return True


def load_word_vectors(path: str | os.PathLike, limit: int | None = None):
    """Load a word2vec file (text or binary, optionally gzipped) as gensim ``KeyedVectors``.

    Binary or text is detected from the file itself; ``limit`` keeps the first (most frequent)
    ``limit`` words.
    """
    from gensim.models import KeyedVectors

    binary = is_word2vec_binary(path)
    log.info("loading word vectors from %s (%s)", path, "binary" if binary else "text")
    try:
        # "replace": a stray broken token in a large crawled vocabulary only fails its own lookup.
        return KeyedVectors.load_word2vec_format(
            str(path), binary=binary, limit=limit, unicode_errors="replace"
        )
    except (ValueError, EOFError) as error:
        where = "" if binary else _first_bad_word2vec_line(path, limit)
        raise ValueError(
            f"{path}{where}: not a valid word2vec {'binary' if binary else 'text'} file ({error}); "
            "re-download its source"
        ) from error


def _first_bad_word2vec_line(path: str | os.PathLike, limit: int | None) -> str:
    """', line N: what is wrong' for the first malformed line of a word2vec text file ('' if
    none)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        count, dim = (int(field) for field in handle.readline().split())
        expected = count if limit is None else min(count, limit)
        lineno = 1
        for lineno, line in enumerate(handle, 2):
            if lineno - 1 > expected:
                break
            parts = line.rstrip("\n").rstrip().split(" ")
            if len(parts) != dim + 1:
                return (
                    f", line {lineno}: expected a word and {dim} numbers, found {len(parts)} fields"
                )
            try:
                [float(x) for x in parts[1:]]
            except ValueError:
                return f", line {lineno}: a vector value is not a number"
        if lineno - 1 < expected:
            return (
                f", line {lineno}: the file ends after {lineno - 1} vectors, "
                f"but its header promises {count}"
            )
    return ""

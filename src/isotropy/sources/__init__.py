"""Raw sources: each fetched into ``resources/raw/<source>/``, every file checked against its pins
or the sources lock, laid out in a staging folder that is swapped in, ``manifest.json`` written
last (docs/online-sources.md)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from isotropy.configuration.data import Downloads
from isotropy.io import plain_data, sha256_file, write_json
from isotropy.paths import MANIFEST_NAME
from isotropy.sources import download, layouts, pins
from isotropy.sources.download import MIRROR_ENV
from isotropy.sources.layouts import HUB_FILE, source_kind

log = logging.getLogger(__name__)
TRUST_PUBLISHED = "published pin"
TRUST_LOCK = "lock (trusted on first use)"
PIN_KEYS = ("sha256", "git_blob", "bytes")  # a value per URL; strongest first
MIRROR_TRUST = {"MANIFEST.tsv": "the mirror's MANIFEST.tsv", "config": TRUST_PUBLISHED}
DOWNLOAD_DEFAULTS = Downloads().model_dump()


def source_params(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The download rule's params: everything the download of ``name`` depends on."""
    sources = config.get("sources", {})
    if name not in sources:
        raise ValueError(f"source {name!r} is not in config 'sources' (known: {sorted(sources)})")
    cfg = sources[name]
    mirror = resolve_mirror(config.get("mirror"))
    settings = {**DOWNLOAD_DEFAULTS, **(config.get("downloads") or {})}
    settings.pop("lock_file", None)  # where the lock lives changes no download's bytes
    params = {
        "name": name,
        "kind": source_kind(name, cfg),
        "urls": _as_list(cfg["url"]),
        "sha256": _aligned_pins(cfg),
        "mirror_files": list(cfg.get("mirror") or []),
        "mirror": str(mirror) if mirror else None,
        **settings,
    }
    # Only where given, so that the params (and the re-runs they trigger) of the others stay.
    for key in ("hub", "git_blob", "bytes", "members"):
        if cfg.get(key):
            params[key] = _aligned_pins(cfg, key) if key in PIN_KEYS else plain_data(cfg[key])
    return params


def url_pins(source_cfg: Mapping[str, Any], key: str = "sha256") -> dict[str, str | None]:
    """URL → its configured ``key`` pin (None where unpinned) of one config 'sources' entry."""
    return dict(zip(_as_list(source_cfg.get("url")), _aligned_pins(source_cfg, key)))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _aligned_pins(cfg: Mapping[str, Any], key: str = "sha256") -> list[str | None]:
    urls, values = _as_list(cfg["url"]), _as_list(cfg.get(key))
    if len(values) > len(urls):
        raise ValueError(
            f"{len(values)} {key} values given for {len(urls)} urls; give one per url, in order"
        )
    return values + [None] * (len(urls) - len(values))


def resolve_mirror(config_value: str | os.PathLike | None) -> Path | None:
    """The mirror folder: ``$ISOTROPY_MIRROR`` if set, else the config value; None for "the
    original sources". One that is not a folder is an error, never a fallback to the network."""
    env_value = os.environ.get(MIRROR_ENV, "").strip()
    value = env_value or (str(config_value) if config_value not in (None, "") else "")
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        origin = f"environment variable {MIRROR_ENV}" if env_value else "config key 'mirror'"
        raise FileNotFoundError(
            f"mirror folder {path} (from {origin}) does not exist; point it at a folder laid out "
            "like shared/mirror, or unset it to download from the original sources"
        )
    return path


def missing_mirror_files(name: str, rels: Sequence[str], mirror: Path) -> list[str]:
    """Mirror files ``rels`` of source ``name`` that ``mirror`` lacks (a note if there are none):
    asked at parse time to plan optional data sets out; a needed one fails its download job."""
    if not rels:
        return [f"(no mirror files configured for source {name!r})"]
    return [rel for rel in rels if not (mirror / rel).is_file()]


def fetch_source(
    name: str,
    params: Mapping[str, Any],
    raw_dir: str | os.PathLike,
    *,
    config: Mapping[str, Any] | None = None,
    clock: download.Clock = time,
) -> dict[str, Any]:
    """Fetch source ``name`` into ``raw_dir``; return its manifest. On failure nothing changes."""
    raw_dir, params = Path(raw_dir), {**DOWNLOAD_DEFAULTS, **params}
    limits = {"max_bytes": params["max_extracted_bytes"], "source": name}
    limits |= {"max_members": params["max_archive_members"], "members": params.get("members") or {}}
    origin = "mirror" if params.get("mirror") else "url"
    raw_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{raw_dir.name}.fetch-", dir=raw_dir.parent))
    fetched, staging = work / "fetched", work / "staging"
    try:
        fetched.mkdir()
        staging.mkdir()
        if origin == "mirror":
            items, inputs = _from_mirror(name, params, fetched)
        elif params["kind"] == "hub":
            items, inputs = _from_hub(params, fetched)
        else:
            items, inputs = _from_urls(params, fetched, pins.lock_path(config), clock)
        items = [replace(item, **limits) for item in items]
        files = layouts.LAYOUTS[params["kind"]](items, origin, staging)
        for item, entry in zip(items, inputs):
            if item.checked:
                entry["members"] = dict(item.checked)
                entry["checked_against"] += ["members"]
        if locked := [entry for entry in inputs if entry["trust"] == TRUST_LOCK]:
            lock = pins.lock_path(config)  # compared again under its file lock
            for entry, record in zip(locked, pins.record_downloads(lock, name, locked)):
                entry["lock"] = {"file": str(lock), **record}
        shutil.rmtree(raw_dir)
        os.replace(staging, raw_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    records = [
        {"path": rel, "bytes": (raw_dir / rel).stat().st_size, "sha256": sha256_file(raw_dir / rel)}
        for rel in files
    ]
    manifest = {
        "source": name,
        "kind": params["kind"],
        "origin": origin,
        "mirror": params.get("mirror"),
        "inputs": inputs,
        "files": records,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_json(raw_dir / MANIFEST_NAME, manifest)
    log.info("source %s: %d file(s) from %s in %s", name, len(records), origin, raw_dir)
    return manifest


def _from_mirror(
    name: str, params: Mapping[str, Any], fetched: Path
) -> tuple[list[layouts.Fetched], list[dict]]:
    """Copy the source's mirror files, each checked against MANIFEST.tsv and any config pin."""
    mirror, rels = Path(params["mirror"]), params.get("mirror_files") or []
    if missing := missing_mirror_files(name, rels, mirror):
        raise FileNotFoundError(
            f"source {name!r} is unavailable: the mirror {mirror} lacks {', '.join(missing)}; "
            f"unset mirror/{MIRROR_ENV} to download it, or leave out what needs it"
        )
    vouchers = mirror_pins(params, mirror)
    damaged = "the copy is damaged or edited (nothing kept); restore it from the original source"
    items, inputs = [], []
    for rel in rels:
        local, label, by = fetched / Path(rel).name, f"mirror file {mirror / rel}", vouchers[rel]
        if not by:
            raise pins.UnverifiedFileError(
                f"{label} cannot be checked (no row in {mirror / 'MANIFEST.tsv'}) and nothing was "
                "kept; add its path, bytes and sha256 to the mirror's MANIFEST.tsv"
            )
        digest = pins.copy_local(mirror / rel, local, None, label)
        if (row := by.get("MANIFEST.tsv")) is not None:
            where = f"{label} (its MANIFEST.tsv entry)"
            pins.check_pin(local.stat().st_size, row["bytes"], where, damaged, what="size")
            pins.check_pin(digest, row["sha256"], where, damaged)
        if "config" in by:
            pins.check_pin(digest, by["config"]["sha256"], label, key=f"sources.{name}.sha256")
        trust = " and ".join(MIRROR_TRUST[key] for key in by)
        items.append(layouts.Fetched(rel, local))
        inputs.append(
            {"mirror_path": rel, "sha256": digest, "checked_against": [*by], "trust": trust}
        )
    return items, inputs


def _from_hub(params: Mapping[str, Any], fetched: Path) -> tuple[list[layouts.Fetched], list[dict]]:
    """One split of a hub data set at its pinned revision, loaded by ``datasets``."""
    import datasets  # Hugging Face's, heavy: loaded only when a hub split is fetched

    hub = params["hub"]
    args = (hub["path"], hub["name"]) if hub.get("name") else (hub["path"],)
    log.info("loading %s (split %s) from the Hugging Face hub", "/".join(args), hub["split"])
    dataset = datasets.load_dataset(*args, split=hub["split"], revision=hub.get("revision"))
    local = fetched / HUB_FILE
    dataset.to_parquet(str(local))
    entry = {
        "hub": hub["path"],
        "config": hub.get("name"),
        "split": hub["split"],
        "revision": hub.get("revision"),
        "fingerprint": getattr(dataset, "_fingerprint", None),
        "sha256": sha256_file(local),
        "checked_against": ["revision"],
        "trust": TRUST_PUBLISHED,
    }
    return [layouts.Fetched(HUB_FILE, local)], [entry]


def _from_urls(
    params: Mapping[str, Any], fetched: Path, lock: Path, clock: download.Clock
) -> tuple[list[layouts.Fetched], list[dict]]:
    """Each URL downloaded and checked against its pins, else the lock, before it is laid out."""
    items, inputs, name = [], [], params["name"]
    for index, url in enumerate(params["urls"]):
        pin = {key: (params.get(key) or [None] * (index + 1))[index] for key in PIN_KEYS}
        local = fetched / download.url_file_name(url)
        log.info("downloading %s", url)
        try:
            digest = download.download_file(
                url,
                local,
                pin["sha256"],
                size=pin["bytes"],
                source=name,
                max_bytes=params["max_extracted_bytes"],
                max_seconds=params["max_download_seconds"],
                clock=clock,
            )
        except download.DownloadError as error:
            raise download.DownloadError(f"source {name!r}: {error}") from error
        entry: dict[str, Any] = {"url": url, "sha256": digest, "bytes": local.stat().st_size}
        if pin["git_blob"] is not None:
            entry["git_blob"] = pins.git_blob_id(local)
            key, what = f"sources.{name}.git_blob", "git object id"
            pins.check_pin(entry["git_blob"], pin["git_blob"], url, key=key, what=what)
        published = pin["sha256"] is not None or pin["git_blob"] is not None
        entry["checked_against"] = [k for k in PIN_KEYS if pin[k] is not None]
        entry["trust"] = TRUST_PUBLISHED if published else TRUST_LOCK
        if not published:
            entry["checked_against"].append("lock")
            pins.check_locked(lock, pins.read_lock(lock), name, url, digest, entry["bytes"])
        items.append(layouts.Fetched(local.name, local))
        inputs.append(entry)
    return items, inputs


def mirror_pins(params: Mapping[str, Any], mirror: Path) -> dict[str, dict[str, Any]]:
    """What vouches for each mirror file (its ``sha256``): its MANIFEST.tsv row, its URL's pin."""
    rows = pins.read_mirror_manifest(mirror) or {}
    config_pins = {
        download.url_file_name(url): {"sha256": pin}
        for url, pin in zip(params.get("urls") or [], params.get("sha256") or [])
        if pin is not None
    }
    vouchers = {}
    for rel in params.get("mirror_files") or []:
        by = {"MANIFEST.tsv": rows.get(rel), "config": config_pins.get(PurePosixPath(rel).name)}
        vouchers[rel] = {key: pin for key, pin in by.items() if pin is not None}
    return vouchers

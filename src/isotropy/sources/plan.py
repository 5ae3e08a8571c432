"""What the workflow asks about sources at parse time, read from its configuration.

The download rule's outputs and params, and the early check that every needed source can be
read from the mirror. The check itself is :func:`isotropy.sources.mirror.source_unavailable`,
which :func:`~isotropy.sources.fetch_source` runs again when the job runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from isotropy.io import plain_data
from isotropy.paths import MANIFEST_NAME, RAW_ROOT
from isotropy.sources.layouts import source_kind
from isotropy.sources.mirror import (
    files_missing_from,
    glue_tasks_in_mirror,
    read_mirror_manifest,
    resolve_mirror,
    source_unavailable,
    unverified_message,
)
from isotropy.sources.transfer import (
    ALLOW_UNVERIFIED_ENV,
    DOWNLOAD_DEFAULTS,
    UnverifiedFileError,
    url_file_name,
    url_problem,
)


def source_dir(name: str, root: str | os.PathLike = RAW_ROOT) -> Path:
    """Folder of a source's raw files."""
    return Path(root) / name


def source_outputs(name: str, root: str | os.PathLike = RAW_ROOT) -> list[str]:
    """Snakemake outputs of the download of ``name``: its manifest (written last, when complete)."""
    return [str(source_dir(name, root) / MANIFEST_NAME)]


def source_params(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Everything the download of ``name`` depends on (urls, sha256 pins, mirror files, kind,
    mirror).

    Used as the rule's params, so a change of any of them re-runs the download.
    """
    sources = config.get("sources", {})
    if name not in sources:
        raise ValueError(f"source {name!r} is not in config 'sources' (known: {sorted(sources)})")
    cfg = sources[name]
    mirror = resolve_mirror(config.get("mirror"))
    settings = {**DOWNLOAD_DEFAULTS, **(config.get("downloads") or {})}
    settings.pop("lock_file", None)  # where the lock lives changes no download's bytes
    if os.environ.get(ALLOW_UNVERIFIED_ENV, "").strip() not in ("", "0"):
        settings["allow_unverified_mirror"] = True
    return {
        "name": name,
        "kind": source_kind(name, cfg),
        "urls": _as_list(cfg["url"]),
        "sha256": _aligned_pins(cfg),
        "mirror_files": list(cfg.get("mirror") or []),
        "mirror": str(mirror) if mirror else None,
        **settings,
        **({"hub": plain_data(cfg["hub"])} if cfg.get("hub") else {}),
        # Only where given, so that the params (and the re-runs they trigger) of the others stay.
        **({"git_blob": _aligned_pins(cfg, "git_blob")} if cfg.get("git_blob") else {}),
        **({"bytes": _aligned_pins(cfg, "bytes")} if cfg.get("bytes") else {}),
        **({"md5": _aligned_pins(cfg, "md5")} if cfg.get("md5") else {}),
        **({"members": plain_data(cfg["members"])} if cfg.get("members") else {}),
        **({"cross_copy": plain_data(cfg["cross_copy"])} if cfg.get("cross_copy") else {}),
    }


def missing_mirror_files(
    name: str, config: Mapping[str, Any], mirror: Path | None = None
) -> list[str]:
    """Mirror files of source ``name`` that the mirror lacks (empty without a mirror)."""
    mirror = mirror if mirror is not None else resolve_mirror(config.get("mirror"))
    if mirror is None:
        return []
    return files_missing_from(mirror, name, config["sources"][name].get("mirror") or [])


def available_glue_tasks(config: Mapping[str, Any], mirror: Path | None = None) -> list[str]:
    """GLUE tasks whose source is fully present in the mirror (all of them without a mirror)."""
    mirror = mirror if mirror is not None else resolve_mirror(config.get("mirror"))
    if mirror is None:
        return sorted(n.removeprefix("glue_") for n in config["sources"] if n.startswith("glue_"))
    return glue_tasks_in_mirror(config["sources"], mirror)


def check_sources_available(names: Sequence[str], config: Mapping[str, Any]) -> None:
    """Fail early (at DAG construction) when a needed source's files are absent from the mirror."""
    mirror = resolve_mirror(config.get("mirror"))
    if mirror is None:
        return
    sources = config["sources"]
    problems = [
        problem
        for name in names
        if (
            problem := source_unavailable(
                name, source_kind(name, sources[name]), sources[name], mirror, sources
            )
        )
        is not None
    ]
    if problems:
        raise FileNotFoundError("\n".join(problems))
    unchecked = [
        message for name in names for message in _unverifiable_mirror_files(name, config, mirror)
    ]
    if unchecked:
        raise UnverifiedFileError("\n".join(unchecked))


def _unverifiable_mirror_files(name: str, config: Mapping[str, Any], mirror: Path) -> list[str]:
    """Why each mirror file of ``name`` that nothing could check would be refused (before any job
    runs)."""
    params = source_params(config, name)
    if params["allow_unverified_mirror"]:
        return []
    manifest = read_mirror_manifest(mirror)
    pinned = {
        rel
        for rel in params["mirror_files"]
        for url, pin in zip(params["urls"], params["sha256"])
        if pin is not None
        and url_problem(url) is None
        and PurePosixPath(rel).name == url_file_name(url)
    }
    return [
        unverified_message(f"mirror file {mirror / rel}", mirror, manifest)
        for rel in params["mirror_files"]
        if rel not in (manifest or {}) and rel not in pinned
    ]


def url_pins(source_cfg: Mapping[str, Any], key: str = "sha256") -> dict[str, str | None]:
    """URL → its configured ``key`` pin (sha256, git_blob …; None where unpinned), for one entry
    of config 'sources'."""
    return dict(zip(_as_list(source_cfg.get("url")), _aligned_pins(source_cfg, key)))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _aligned_pins(cfg: Mapping[str, Any], key: str = "sha256") -> list[str | None]:
    urls = _as_list(cfg["url"])
    pins = _as_list(cfg.get(key))
    if len(pins) > len(urls):
        raise ValueError(f"{len(pins)} {key} values given for {len(urls)} urls")
    return pins + [None] * (len(urls) - len(pins))

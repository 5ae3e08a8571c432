"""Cross-copies: a fetched file compared with a second public copy of the same bytes.

Where no public record pins a file but another public copy of it exists, the two are compared
after the download and the result recorded in the manifest (``cross_copy``): ``same``,
``differs`` or ``not checked`` with the reason (offline, say). It is a record, not a pin: a
differing copy is logged and shown by the audit, and the lock still decides what is accepted.

A copy is given by its published sha256 (config ``sources.<name>.cross_copy.sha256``), or as a
file of a Hugging Face hub repository (``hub``, ``hub_file``), whose sha256 the hub gives for
every LFS file without the file being downloaded (``huggingface_hub.get_hf_file_metadata``).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from isotropy.sources.transfer import url_file_name

log = logging.getLogger(__name__)
SHA256 = re.compile(r"[0-9a-f]{64}")
SAME, DIFFERS, NOT_CHECKED = "same", "differs", "not checked"


class CopyUnavailable(RuntimeError):
    """The second copy's digest cannot be had now (no network, no hub, no sha256 given)."""


def compare_copy(
    source: str,
    spec: Mapping[str, Any],
    inputs: Sequence[Mapping[str, Any]],
    files: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The result of comparing ``spec['file']`` (a fetched input's file name, or a raw file of
    the layout) with the copy ``spec`` names; logged, and returned for the manifest."""
    ours = _our_file(spec["file"], inputs, files)
    result: dict[str, Any] = {"file": spec["file"], "copy": spec.get("record", ""), "sha256": ours}
    if ours is None:
        result.update(result=NOT_CHECKED, reason=f"no fetched or raw file named {spec['file']}")
        return result
    try:
        theirs, where = _copy_digest(spec)
    except CopyUnavailable as error:
        result.update(result=NOT_CHECKED, reason=str(error))
        log.info(
            "source %s: %s not compared with %s: %s", source, spec["file"], result["copy"], error
        )
        return result
    result.update(copy_sha256=theirs, where=where, result=SAME if theirs == ours else DIFFERS)
    if result["result"] == DIFFERS:
        log.warning(
            "source %s: %s (sha256 %s) differs from the public copy %s (sha256 %s)",
            source,
            spec["file"],
            ours,
            where,
            theirs,
        )
    return result


def _our_file(
    name: str, inputs: Sequence[Mapping[str, Any]], files: Sequence[Mapping[str, Any]]
) -> str | None:
    for entry in inputs:
        if "url" in entry and url_file_name(entry["url"]) == name:
            return str(entry["sha256"])
    for record in files:
        if record["path"] == name:
            return str(record["sha256"])
    return None


def _copy_digest(spec: Mapping[str, Any]) -> tuple[str, str]:
    """(sha256, where) of the second copy."""
    if spec.get("sha256"):
        return str(spec["sha256"]), str(spec.get("url") or spec.get("record") or "its record")
    if spec.get("hub"):
        return hub_file_sha256(
            spec["hub"], spec.get("hub_file") or spec["file"], spec.get("revision")
        )
    raise CopyUnavailable("the cross_copy gives neither a sha256 nor a hub repository")


def hub_file_sha256(repo: str, filename: str, revision: str | None = None) -> tuple[str, str]:
    """The sha256 the Hugging Face hub gives for an LFS file (its ETag), without downloading it."""
    import huggingface_hub
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
        raise CopyUnavailable("offline (HF_HUB_OFFLINE=1): the hub copy was not checked")
    endpoint = os.environ.get("HF_ENDPOINT") or None
    url = huggingface_hub.hf_hub_url(repo, filename, revision=revision, endpoint=endpoint)
    try:
        meta = huggingface_hub.get_hf_file_metadata(url)
    except Exception as error:  # any failure to reach the hub: the comparison is only recorded
        raise CopyUnavailable(
            f"the hub could not be asked ({type(error).__name__}: {error})"
        ) from error
    etag = (meta.etag or "").strip('"').lower()
    if not SHA256.fullmatch(etag):
        raise CopyUnavailable(
            f"the hub gives no sha256 for {url} (ETag {meta.etag!r}: not an LFS file)"
        )
    return etag, f"{url} (commit {meta.commit_hash})"

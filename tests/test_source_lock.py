"""Every online input verified, on the local HTTP server: the sources lock (trusted on first use,
refused when changed, relocked on purpose, flagged by the audit), archive member pins, and no
source of config.yaml downloaded without a published pin or the lock."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import subprocess
from pathlib import Path

import pytest
from test_download import POLARITY, cornell_members, mirror_params, served_params, sha, tar_gz
from test_download import online as online  # autouse: every source fetched from its URL
from test_download import params as url_params

from isotropy import audit, sources
from isotropy.audit import FAIL, OK, walk
from isotropy.readers.registry import input_trust, read_source_manifest
from isotropy.sources.download import url_file_name
from isotropy.sources.pins import (
    LOCK_ENV,
    RELOCK_ENV,
    ChecksumError,
    LockMismatchError,
    read_lock,
    record_downloads,
)

ROOT = Path(__file__).resolve().parents[1]
V1, V2 = b"word,pos\nrun,verb\n", b"word,pos\nrun,noun\n"


def fetch(name: str, url: str, raw: Path) -> dict:
    """A source without any published pin (like codwoe), its file used as it is."""
    return sources.fetch_source(name, url_params(name, [url], kind="files"), raw)


# ---------------------------------------------------------------------------------------------
# The lock: first use, refusal, relock


def test_the_first_download_writes_the_lock_and_a_changed_body_is_refused_until_relocked(
    http, tmp_path, sources_lock, monkeypatch, caplog
):
    http.routes["/lexicon.csv"] = V1
    url = http.url("/lexicon.csv")
    manifest = fetch("lexicon", url, tmp_path / "raw")
    record = read_lock(sources_lock)["lexicon"][url]
    assert (record["sha256"], record["bytes"]) == (sha(V1), len(V1)) and "replaced" not in record
    entry = manifest["inputs"][0]
    assert entry["trust"] == sources.TRUST_LOCK == "lock (trusted on first use)"
    assert entry["checked_against"] == ["lock"]
    assert entry["lock"]["file"] == str(sources_lock) and entry["lock"]["sha256"] == sha(V1)
    # What a prepared data set's provenance record says it rests on.
    trust = input_trust(read_source_manifest(tmp_path / "raw"))
    assert trust == {url: "lock (trusted on first use)"}
    fetch("lexicon", url, tmp_path / "raw")  # the same bytes again: accepted, the lock untouched
    assert caplog.text.count(f"no sources lock at {sources_lock}: starting one") == 1  # once
    before = sources_lock.read_text()
    assert before.startswith("# The sources lock")
    assert read_lock(sources_lock)["lexicon"][url] == record
    http.routes["/lexicon.csv"] = V2
    with pytest.raises(LockMismatchError) as info:
        fetch("lexicon", url, tmp_path / "raw")
    message = str(info.value)
    assert str(sources_lock) in message and url in message
    assert sha(V1) in message and sha(V2) in message
    assert "make relock SOURCE=lexicon" in message
    assert sources_lock.read_text() == before  # nothing recorded
    assert (tmp_path / "raw" / "lexicon.csv").read_bytes() == V1  # nothing replaced
    monkeypatch.setenv(RELOCK_ENV, "other, lexicon")
    manifest = fetch("lexicon", url, tmp_path / "raw")
    record = read_lock(sources_lock)["lexicon"][url]
    assert record["sha256"] == sha(V2)
    assert [old["sha256"] for old in record["replaced"]] == [sha(V1)]
    assert record["replaced"][0]["relocked"] == record["locked"]
    assert manifest["inputs"][0]["lock"]["replaced"][0]["sha256"] == sha(V1)
    assert (tmp_path / "raw" / "lexicon.csv").read_bytes() == V2
    monkeypatch.delenv(RELOCK_ENV)
    fetch("lexicon", url, tmp_path / "raw")  # the relocked bytes are now the lock's
    not_hex = "{sha256: " + "z" * 64 + ", bytes: 1}"  # 64 characters, but not hex digits
    for damaged in ("{sha256: abc}", f"{{sha256: {list(range(64))}, bytes: 1}}", not_hex):
        sources_lock.write_text(f"lexicon: {{{url}: {damaged}}}\n")
        with pytest.raises(ChecksumError, match=f"sources lock {sources_lock} is damaged"):
            fetch("lexicon", url, tmp_path / "raw")


def _record_one(args: tuple[str, str]) -> None:
    path, source = args
    digest = hashlib.sha256(source.encode()).hexdigest()
    record_downloads(path, source, [{"url": f"https://x/{source}", "sha256": digest, "bytes": 1}])


def test_parallel_jobs_each_keep_their_record(tmp_path):
    lock = tmp_path / "config" / "sources.lock"
    names = [f"source{i}" for i in range(12)]
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.map(_record_one, [(str(lock), name) for name in names])
    assert sorted(read_lock(lock)) == sorted(names)
    assert not [p for p in lock.parent.iterdir() if ".part" in p.name]


def test_make_relock_runs_the_download_with_relock_asked_for():
    env = {key: value for key, value in os.environ.items() if key != sources.MIRROR_ENV}

    def make(*args: str, **extra: str) -> subprocess.CompletedProcess:
        command = ["make", "-n", "relock", *args]
        return subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, env={**env, **extra}
        )

    out = make("SOURCE=codwoe")
    assert out.returncode == 0, out.stderr
    assert "ISOTROPY_RELOCK=codwoe" in out.stdout
    assert "--forcerun download_source" in out.stdout
    assert "resources/raw/codwoe/manifest.json" in out.stdout
    missing = make()
    assert missing.returncode != 0 and "give SOURCE=" in missing.stderr
    mirrored = make("SOURCE=codwoe", ISOTROPY_MIRROR="/work/mirror")
    assert mirrored.returncode != 0 and "unset ISOTROPY_MIRROR" in mirrored.stderr


# ---------------------------------------------------------------------------------------------
# The audit: a download made before a relock


def test_the_audit_flags_a_download_fetched_before_a_relock(http, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the audit reads the project's lock (config/ of the working directory), never the folder's
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "config/sources.lock"))
    http.routes["/lexicon.csv"] = V1
    url = http.url("/lexicon.csv")
    fetch("lexicon", url, tmp_path / "resources/raw/lexicon")  # a source the project pins not
    raw = ["resources/raw/lexicon/manifest.json"]
    findings = walk(tmp_path, starts=raw)
    assert not [f for f in findings if f.status == FAIL]
    trusted = [f.reason for f in findings if f.status == OK]
    assert any("lock (trusted on first use): lexicon.csv" in reason for reason in trusted)
    # A relock recorded elsewhere (a pulled lock): the raw folder fetched before it no longer
    # matches.
    monkeypatch.setenv(RELOCK_ENV, "lexicon")
    record_downloads(
        "config/sources.lock", "lexicon", [{"url": url, "sha256": sha(V2), "bytes": len(V2)}]
    )
    reasons = [f.reason for f in walk(tmp_path, starts=raw) if f.status == FAIL]
    assert any("lock pins" in r and "relocked since" in r for r in reasons), reasons


# ---------------------------------------------------------------------------------------------
# Member pins: polarity's two files, from the public record


def test_the_cornell_tarball_checked_by_its_members_ends_as_the_mirror_does(
    http, tmp_path, config, mirror_root
):
    """The tarball (Latin-1 with Windows-1252 punctuation) and the mirror (UTF-8) end as the same
    UTF-8 raw files; the tarball itself has no public record, its members do."""
    members = cornell_members(mirror_root)
    pos_bytes = members["rt-polaritydata/rt-polarity.pos"]
    assert b"\xe9" in pos_bytes and b"\x97" in pos_bytes  # é (Latin-1) and — (cp1252 only)
    tarball = tar_gz(members)
    http.routes["/rt-polaritydata.tar.gz"] = tarball
    params = served_params(config, "polarity", http.url("/rt-polaritydata.tar.gz"))
    manifest = sources.fetch_source("polarity", params, tmp_path / "raw")
    entry = manifest["inputs"][0]
    assert entry["checked_against"] == ["lock", "members"]
    assert entry["trust"] == sources.TRUST_LOCK and manifest["origin"] == "url"
    pins = config["sources"]["polarity"]["members"]
    assert {name: (m["bytes"], m["sha256"]) for name, m in entry["members"].items()} == {
        name: (pin["bytes"], pin["sha256"]) for name, pin in pins.items()
    }
    assert entry["url"].endswith("rt-polaritydata.tar.gz") and entry["sha256"] == sha(tarball)
    mirrored = sources.fetch_source(
        "polarity", mirror_params("polarity", config, mirror_root), tmp_path / "mirror"
    )
    assert mirrored["origin"] == "mirror"
    assert all(entry["checked_against"] == ["MANIFEST.tsv"] for entry in mirrored["inputs"])
    for name in POLARITY:
        assert (tmp_path / "raw" / name).read_bytes() == (tmp_path / "mirror" / name).read_bytes()


@pytest.mark.parametrize(
    "plant, error, message",
    [
        ("tampered", ChecksumError, r"'rt-polaritydata/rt-polarity.pos' .*: pinned [0-9a-f]{64} "),
        (
            "pinned-not-there",
            ValueError,
            r"members.README: no such member in archive rt.tar.gz \(it holds rt-polarity.neg, rt-",
        ),
        ("unpinned-not-there", ValueError, r"polarity source lacks rt-polarity.neg in \['rt.tar"),
    ],
)
def test_a_tarball_without_its_pinned_or_needed_members_is_refused_before_decoding(
    http, tmp_path, config, mirror_root, plant, error, message
):
    members = cornell_members(mirror_root)
    pos, neg = (f"rt-polaritydata/{name}" for name in POLARITY)
    params = served_params(config, "polarity", http.url("/rt.tar.gz"))
    if plant == "tampered":
        members[pos] = members[pos].replace(b"a", b"e", 1)
    elif plant == "pinned-not-there":
        params["members"] = {**params["members"], "README": {"sha256": sha(b"y\n"), "bytes": 2}}
    else:
        del members[neg], params["members"]
    http.routes["/rt.tar.gz"] = tar_gz(members)
    with pytest.raises(error, match=message):
        sources.fetch_source("polarity", params, tmp_path / "raw")
    assert list((tmp_path / "raw").iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Every source of config.yaml: a published pin or the lock, never neither


def _served(config: dict, name: str, http) -> tuple[dict, list[str]]:
    """Source ``name`` of config.yaml with every URL served here, each answering bytes that are
    not the published file; (its params, the URLs no published sha256 or git object id pins)."""
    source = config["sources"][name]
    served = []
    for url in sources._as_list(source["url"]):
        path = f"/{name}/{url_file_name(url)}"
        http.routes[path] = b"not the published file\n"
        served.append(http.url(path))
    here = {**source, "url": served if isinstance(source["url"], list) else served[0]}
    sha256, blobs = sources.url_pins(here), sources.url_pins(here, "git_blob")
    unpinned = [url for url in served if not sha256[url] and not blobs[url]]
    return served_params(config, name, here["url"]), unpinned


def test_every_source_is_checked_by_a_published_pin_or_the_lock(
    http, tmp_path, config, monkeypatch
):
    """A wrong body for any URL source is refused before it is laid out: by its published pin
    (sha256, git object id, size) or, where no public record pins it, by the lock's record (set
    here as a first download would have). Sources added later are covered as they are listed."""
    seen = {"published": [], "lock": []}
    for name in [name for name, s in config["sources"].items() if s.get("kind") != "hub"]:
        params, unpinned = _served(config, name, http)
        lock = tmp_path / name / "sources.lock"
        record_downloads(
            lock, name, [{"url": url, "sha256": sha(b"first use"), "bytes": 9} for url in unpinned]
        )
        monkeypatch.setenv(LOCK_ENV, str(lock))
        with pytest.raises(ChecksumError) as info:
            sources.fetch_source(name, params, tmp_path / name / "raw")
        if params["urls"][0] in unpinned:  # the first URL fails first
            assert isinstance(info.value, LockMismatchError), name
            assert f"make relock SOURCE={name}" in str(info.value)
            seen["lock"].append(name)
        else:
            assert not isinstance(info.value, LockMismatchError), name
            assert f"sources.{name}." in str(info.value), name
            seen["published"].append(name)
        assert not [p for p in (tmp_path / name / "raw").iterdir()], name
    assert {"codwoe", "word2vec", "polarity"} <= set(seen["lock"])
    published = {"snli", "wordnet", "supersense_words", "supersense_features", "hf_sickr_test"}
    assert published <= set(seen["published"])


PIN = "1" * 40


@pytest.mark.parametrize(
    "settings, fetched, field, name",
    [  # a download pinned only by its git object id; a hub data set pinned by its commit
        ({"url": "https://example.org/a.txt", "git_blob": PIN}, "url", "git_blob", "a.txt"),
        ({"hub": {"revision": PIN}}, "hub", "revision", "set"),
    ],
)
def test_the_audit_checks_a_download_against_its_git_object_id_or_commit(
    monkeypatch, settings, fetched, field, name
):
    """The recorded git object id or hub commit against today's pin: another one is a mismatch."""
    monkeypatch.setattr(audit, "project_sources", lambda: {"s": settings})
    where = settings.get("url") or "org/set"
    entry = {fetched: where, "sha256": "ab" * 32, field: PIN}
    manifest = {"source": "s", "inputs": [entry]}
    assert audit.check_pins("resources/raw/s/manifest.json", manifest) == (
        [],
        f"published pin: {name}",
    )
    manifest["inputs"] = [{**entry, field: "2" * 40}]
    (finding,), _ = audit.check_pins("resources/raw/s/manifest.json", manifest)
    assert finding.status == FAIL and f"but config pins {PIN[:12]}" in finding.reason

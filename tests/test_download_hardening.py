"""Sources against hostile archives, a full disk and changed upstream files (issues 34 and 35),
served on 127.0.0.1; the download itself against failing servers is tests/test_download.py's."""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
from pathlib import Path

import pytest
import yaml
from test_download import zip_bytes

from isotropy import sources
from isotropy.io import DiskFullError
from isotropy.readers.sts import read_sts
from isotropy.sources.layouts import ArchiveError, ChecksumError
from isotropy.workflow.config import with_sources

ROOT = Path(__file__).resolve().parents[1]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(autouse=True)
def online(monkeypatch):
    """Every source here is fetched from its URL, never from a mirror."""
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)


# ---------------------------------------------------------------------------------------------
# A full disk (issue 34.8 and 34.13)


def test_an_archive_unpacked_onto_a_full_disk_names_member_and_archive(tmp_path, monkeypatch):
    from isotropy.sources import layouts

    real_open = open

    def full_disk(path, mode="r", *args, **kwargs):  # writes in staging land on /dev/full
        writes = "b" in mode and ("w" in mode or "a" in mode)
        return real_open("/dev/full" if writes else path, mode, *args, **kwargs)

    archive = tmp_path / "SST-2.zip"
    archive.write_bytes(zip_bytes({"SST-2/train.tsv": b"sentence\tlabel\nok\t1\n"}))
    staging = tmp_path / ".fetch-1" / "staging"
    staging.mkdir(parents=True)
    monkeypatch.setattr(layouts, "open", full_disk, raising=False)
    with pytest.raises(DiskFullError) as info:
        layouts.extract_members(sources.Fetched("SST-2.zip", archive), lambda m: True, staging)
    message = str(info.value)
    assert "unpacking member 'SST-2/train.tsv' of archive SST-2.zip" in message
    assert "no space left on the device of" in message and "train.tsv" in message


def test_a_full_disk_while_laying_out_a_source_names_the_source(http, tmp_path, monkeypatch):
    import shutil

    http.routes["/words.txt"] = b"dog\ncat\n"
    real_copyfile = shutil.copyfile
    monkeypatch.setattr(shutil, "copyfile", lambda src, dst: real_copyfile(src, "/dev/full"))
    params = plain_params("supersense_words", [http.url("/words.txt")])
    with pytest.raises(DiskFullError) as info:
        sources.fetch_source(
            "supersense_words",
            params,
            tmp_path / "raw",
        )
    message = str(info.value)
    assert "laying out source 'supersense_words': no space left on the device of" in message
    assert str(tmp_path / "raw") in message
    assert list((tmp_path / "raw").iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Duplicate archive members (issue 34.6)


def tar_gz(members: list[tuple[str, bytes]]) -> bytes:
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_polarity_tarball_with_a_second_rt_polarity_pos_is_refused(http, tmp_path):
    tarball = tar_gz(
        [
            ("rt-polaritydata/rt-polarity.pos", b"a fine film\n"),
            ("rt-polaritydata/rt-polarity.neg", b"a dull film\n"),
            ("old/rt-polarity.pos", b"injected text\n"),
        ]
    )
    http.routes["/rt-polaritydata.tar.gz"] = tarball
    params = plain_params("polarity", [http.url("/rt-polaritydata.tar.gz")])
    with pytest.raises(ArchiveError) as info:
        sources.fetch_source(
            "polarity",
            params,
            tmp_path / "raw",
        )
    assert "two members named rt-polarity.pos" in str(info.value)
    assert "'old/rt-polarity.pos'" in str(info.value)
    assert list((tmp_path / "raw").iterdir()) == []


def test_a_glue_zip_with_two_train_files_is_refused(http, tmp_path):
    archive = zip_bytes({"SST-2/train.tsv": b"sentence\tlabel\na\t1\n", "x/train.tsv": b"evil\n"})
    http.routes["/SST-2.zip"] = archive
    with pytest.raises(ArchiveError, match="two members named train.tsv"):
        sources.fetch_source(
            "glue_sst2", plain_params("glue_sst2", [http.url("/SST-2.zip")]), tmp_path / "r"
        )


def plain_params(name: str, urls: list[str], **extra) -> dict:
    return {
        "name": name,
        "kind": sources.source_kind(name),
        "urls": urls,
        "sha256": [None] * len(urls),
        "mirror_files": [],
        "mirror": None,
        **extra,
    }


# ---------------------------------------------------------------------------------------------
# Pins (issue 35)


@pytest.fixture(scope="module")
def config() -> dict:
    return with_sources(yaml.safe_load((ROOT / "config.yaml").read_text()))


def test_every_url_source_is_pinned_or_said_to_be_unpinned(config):
    text = (ROOT / "config" / "sources.yaml").read_text()
    unpinned = []
    for name, source in config["sources"].items():
        if source.get("kind") == "hub":
            assert len(source["hub"]["revision"]) == 40, name  # pinned by its hub commit
            continue
        urls = source["url"] if isinstance(source["url"], list) else [source["url"]]
        assert all(url.startswith("https://") for url in urls), name
        assert "/gh-pages/" not in source["url"] and "/master/" not in str(source["url"]), name
        if not (source.get("sha256") or source.get("git_blob") or source.get("members")):
            unpinned.append(name)
    # Unpinned sources rest on the sources lock (tests/test_source_lock.py checks that every
    # source is refused on a wrong body); the two the paper needs say so beside them.
    assert {"codwoe", "word2vec"} <= set(unpinned)
    for name in ("codwoe", "word2vec"):
        block = " ".join(text[text.index(f"\n  {name}:") :][:600].replace("#", " ").split())
        assert "UNPINNED: no public code found pins this file" in block, name
        assert "it rests on the sources lock" in block, name


def test_a_changed_upstream_file_is_refused_with_both_hashes_and_the_remedy(http, tmp_path, config):
    new = b"a changed file\n"
    http.routes["/SICK_test_annotated.txt"] = new
    source = copy.deepcopy(config["sources"]["hf_sickr_test"])
    source.update(url=http.url("/SICK_test_annotated.txt"), git_blob=None, bytes=None)
    params = sources.source_params({"sources": {"hf_sickr_test": source}}, "hf_sickr_test")
    with pytest.raises(ChecksumError) as info:
        sources.fetch_source(
            "hf_sickr_test",
            params,
            tmp_path / "raw",
        )
    message = str(info.value)
    assert http.url("/SICK_test_annotated.txt") in message
    assert source["sha256"] in message and sha(new) in message
    assert f"accept it deliberately: set sources.hf_sickr_test.sha256 to {sha(new)}" in message
    assert list((tmp_path / "raw").iterdir()) == []


def test_an_ftp_url_is_refused_by_the_schema_naming_the_key(config):
    from isotropy.workflow.config import ConfigError, check_loaded_config

    broken = copy.deepcopy(config)
    broken["sources"]["polarity"]["url"] = "ftp://example.org/rt-polaritydata.tar.gz"
    with pytest.raises(ConfigError) as info:
        check_loaded_config(broken)
    message = str(info.value)
    assert "'sources.polarity.url'" in message and "match pattern '^(https?|file)://'" in message
    assert "valid list" not in message  # one sentence per key: the closest alternative


# ---------------------------------------------------------------------------------------------
# SICK-R online: SemEval-2014's 4,927 test pairs (issue 35.1)


def test_sickr_online_gives_the_4927_semeval_test_pairs(http, tmp_path, config):
    data = gzip.decompress((ROOT / "tests/data/sick/SICK_test_annotated.txt.gz").read_bytes())
    source = copy.deepcopy(config["sources"]["hf_sickr_test"])
    path = "/" + source["url"].split("/", 3)[3]  # the pinned address, served here
    http.routes[path] = data
    source["url"] = http.url(path)
    params = sources.source_params({"sources": {"hf_sickr_test": source}}, "hf_sickr_test")
    manifest = sources.fetch_source(
        "hf_sickr_test",
        params,
        tmp_path / "raw",
    )
    assert manifest["inputs"][0]["checked_against"] == ["sha256", "git_blob", "bytes"]
    table = read_sts("sickr", "test", tmp_path / "raw")
    assert len(table) == 4927
    assert table["score"].between(1, 5).all()

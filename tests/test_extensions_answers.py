"""The extension study's answers in docs/extensions.md are generated from the committed per-seed
values (isotropy.committed.extensions; tests/test_committed.py fails when the page is stale):
these tests show that the rendering follows the values."""

from pathlib import Path

import pandas as pd

from isotropy.committed import extensions as answers
from isotropy.committed.record import Page
from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
from isotropy.verdicts.extension_answers import claims_table

ROOT = Path(__file__).resolve().parents[1]


def test_claims_without_values_render_as_not_run():
    from isotropy.extensions.results import SEED_COLUMNS
    from isotropy.statistics import NOT_RUN

    empty = pd.DataFrame(columns=SEED_COLUMNS)
    table = claims_table(empty)
    assert set(table["claim"]) == {c.name for c in EXTENSION_CLAIMS}
    assert set(table["verdict"]) == {NOT_RUN}
    block = Page(ROOT, lambda _: answers.answers_parts(empty, {"run": "none"})).render(ROOT)
    assert block.count("*not run*") == len(EXTENSION_CLAIMS)


def test_the_heldout_answer_is_judged_on_the_recorded_baseline(mirror_root, tmp_path):
    """The committed held-out seeds carry the majority baseline, which is the
    split's own (recomputed here from the mirror's polarity sentences) and what the rerun of seed
    3 recorded, and that rerun reproduces the committed seed-3 values. Both answers are judged; a
    planted baseline above every seed's accuracy turns them back to *not judged*."""
    from isotropy import sources as download
    from isotropy.extensions import results
    from isotropy.extensions.heldout import Heldout, heldout_baseline
    from isotropy.io import sha256_file
    from isotropy.readers.inputs import dataset_options, dataset_sources
    from isotropy.readers.registry import prepare_dataset
    from isotropy.statistics import NOT_LEARNED
    from isotropy.verdicts.learning import HELDOUT_CLAIMS
    from isotropy.workflow.config import load_config

    seeds, run = answers.load(ROOT)
    record = run["heldout_baseline"]
    config, typed = load_config([str(ROOT / "config.yaml")])
    params = download.source_params({**config, "mirror": str(mirror_root)}, "polarity")
    download.fetch_source("polarity", params, tmp_path / "polarity")
    raw = {"polarity": tmp_path / "polarity"}
    table = prepare_dataset(
        "polarity", raw, dataset_sources(typed, "polarity"), dataset_options(typed, "polarity")
    )
    settings = Heldout.model_validate(config["extensions"]["heldout"])
    majority, items = heldout_baseline(table, settings)
    held = seeds[seeds["question"] == "heldout"]
    recorded = held.set_index(["quantity", "seed"])["value"]
    for quantity, value in (("majority_baseline", majority), ("heldout_items", items)):
        assert recorded[quantity].eq(value).all() and len(recorded[quantity]) == 5
    assert sha256_file(ROOT / record["epochs"]) == record["sha256"]
    epochs = pd.read_csv(ROOT / record["epochs"])
    assert epochs["heldout_majority"].eq(majority).all()
    rerun = results.heldout_seeds(epochs).set_index(["item", "quantity", "seed"])["value"]
    committed = held.set_index(["item", "quantity", "seed"])["value"]
    pd.testing.assert_series_equal(rerun, committed.loc[rerun.index], rtol=1e-6)
    verdicts = claims_table(seeds).set_index("claim")["verdict"]
    assert NOT_LEARNED not in set(verdicts.loc[list(HELDOUT_CLAIMS)])
    planted = seeds.assign(
        value=seeds["value"].mask(seeds["quantity"] == "majority_baseline", 0.95)
    )
    verdicts = claims_table(planted).set_index("claim")["verdict"]
    assert set(verdicts.loc[list(HELDOUT_CLAIMS)]) == {NOT_LEARNED}

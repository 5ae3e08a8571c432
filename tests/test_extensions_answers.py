"""The extension study's answers in docs/extensions.md are generated from the committed per-seed
values (isotropy.committed.extensions; tests/test_committed.py fails when the page is stale):
these tests show that the rendering follows the values."""

from pathlib import Path

import pandas as pd
import pytest

from isotropy.committed import extensions as answers
from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
from isotropy.io import generated_block, with_block
from isotropy.verdicts.extension_answers import claims_table

ROOT = Path(__file__).resolve().parents[1]


def test_every_claim_row_of_the_values_is_in_the_table():
    seeds, run = answers.load(ROOT)
    table = claims_table(seeds)
    block = answers.answers_markdown(seeds, run)
    for row in table.itertuples(index=False):
        assert f"| `{row.claim}` | {row.setup} |" in block
        assert f"*{row.verdict}* |" in block


def test_the_rendering_follows_the_values():
    """Turn every triplet run's IsoScore change the other way: the rendered verdict moves, so
    the staleness test above cannot pass on a page written for other values."""
    seeds, run = answers.load(ROOT)
    triplet = (seeds["question"] == "triplet") & (seeds["quantity"] == "isoscore_change")
    if not triplet.any():
        pytest.skip("the committed run has no triplet runs")
    before = claims_table(seeds).set_index("claim").loc["triplet_need_not_be_anisotropic"]
    flipped = seeds.assign(value=seeds["value"].where(~triplet, -seeds["value"]))
    after = claims_table(flipped).set_index("claim").loc["triplet_need_not_be_anisotropic"]
    assert after["verdict"] != before["verdict"]
    assert answers.answers_markdown(flipped, run) != answers.answers_markdown(seeds, run)


def test_a_page_without_its_place_is_refused():
    """isotropy.io's marker-block helper, as every generated page uses it."""
    with pytest.raises(ValueError, match="markers"):
        generated_block(f"{answers.START}\n", answers.START, answers.END)
    with pytest.raises(ValueError, match="markers"):
        generated_block("no markers", answers.START, answers.END)
    with pytest.raises(ValueError, match="markers"):
        with_block("no markers", "block", answers.START, answers.END)
    text = f"before\n{answers.START}\nold\n{answers.END}\nafter\n"
    renewed = with_block(text, "new\n", answers.START, answers.END)
    assert renewed == f"before\n{answers.START}\n\nnew\n\n{answers.END}\nafter\n"


def test_claims_without_values_render_as_not_run():
    empty = pd.DataFrame(columns=["question", "setup", "item", "quantity", "seed", "value"])
    block = answers.answers_markdown(empty, {"run": "none"})
    assert block.count("*not run*") == len(EXTENSION_CLAIMS)

"""Write the data files of the recorded hub layouts (README.md here says what they are and where
each comes from; it is kept by hand). Run from this folder: ``python make_layouts.py``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
SHARD = "{split}-00000-of-00001.parquet"

# nyu-mll/glue: <config>/<split>-00000-of-00001.parquet, columns of the card's dataset_info.
GLUE = {
    "sst2": {"sentence": ["a gripping , funny film ", "dull and overlong "], "label": [1, 0]},
    "cola": {"sentence": ["The cat sat on the mat.", "Mat the on sat cat."], "label": [1, 0]},
    "qnli": {
        "question": ["What colour is the sky?", "Who wrote it?"],
        "sentence": ["The sky is blue on a clear day.", "It rained all week."],
        "label": [0, 1],
    },
    "rte": {
        "sentence1": ["A man plays a guitar on stage.", "The shop opens at nine."],
        "sentence2": ["A man is playing music.", "The shop is closed all day."],
        "label": [0, 1],
    },
    "mrpc": {
        "sentence1": ["He said the plan would work.", "Shares rose 5 percent."],
        "sentence2": ["The plan will work, he said.", "The company hired a new chief."],
        "label": [1, 0],
    },
    "qqp": {
        "question1": ["How do I learn Python?", "What is the capital of France?"],
        "question2": ["What is the best way to learn Python?", "How tall is Everest?"],
        "label": [1, 0],
    },
    "stsb": {
        "sentence1": ["A plane is taking off.", "A man is slicing a potato."],
        "sentence2": ["An air plane is taking off.", "A woman plays the flute."],
        "label": [5.0, 0.25],
    },
}
LABEL_TYPES = {"stsb": pa.float32()}


def write_shard(folder: str, split: str, table: pa.Table) -> None:
    path = HERE / folder / SHARD.format(split=split)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def glue() -> None:
    for config, columns in GLUE.items():
        for split in ("train", "validation", "test"):
            data = {**columns, "idx": list(range(len(columns["label"])))}
            if split == "test":  # GLUE's test labels are hidden: -1 on the hub
                data["label"] = [-1] * len(columns["label"])
            schema = pa.schema(
                [
                    *[(name, pa.string()) for name in columns if name != "label"],
                    ("label", LABEL_TYPES.get(config, pa.int64())),
                    ("idx", pa.int32()),
                ]
            )
            write_shard(f"nyu-mll/glue/{config}", split, pa.Table.from_pydict(data, schema=schema))


def sst5() -> None:
    # SetFit/sst5: train.jsonl, dev.jsonl, test.jsonl; one JSON object per line.
    rows = [
        {"text": "a gripping , funny film", "label": 4, "label_text": "very positive"},
        {"text": "it 's fine , i guess", "label": 2, "label_text": "neutral"},
        {"text": "dull and overlong", "label": 0, "label_text": "very negative"},
    ]
    folder = HERE / "SetFit/sst5"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("train", "dev", "test"):
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")


def semeval_sts() -> None:
    # mteb/sts12-sts ... mteb/sts16-sts: test.jsonl.gz with sentence1, sentence2, score (0-5),
    # the columns MTEB's STS tasks read.
    rows = [
        {
            "sentence1": "A plane is taking off.",
            "sentence2": "An air plane is taking off.",
            "score": 5.0,
        },
        {
            "sentence1": "A man plays a flute.",
            "sentence2": "A woman slices an onion.",
            "score": 0.5,
        },
    ]
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    for year in (12, 13, 14, 15, 16):
        folder = HERE / f"mteb/sts{year}-sts"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "test.jsonl.gz").write_bytes(gzip.compress(text, mtime=0))


def wikitext() -> None:
    # Salesforce/wikitext: <config>/<split>-00000-of-00001.parquet, one column "text" (lines).
    lines = [
        "",
        " = Robert Boulter = \n",
        "",
        " Robert Boulter is an English film actor . He had a guest role in 2000 . \n",
        " In 2006 , he starred in a play . It was well received . \n",
    ]
    folder = "Salesforce/wikitext/wikitext-2-raw-v1"
    write_shard(folder, "test", pa.table({"text": pa.array(lines, pa.string())}))
    # The training split (Cai et al.'s protocol reads it whole): synthetic lines as above.
    train = [
        "",
        " = A Training Article = \n",
        "",
        " The training split is read as running text . \n",
    ]
    write_shard(folder, "train", pa.table({"text": pa.array(train, pa.string())}))


def squad() -> None:
    # rajpurkar/squad: plain_text/<split>-00000-of-00001.parquet; answers is a struct of lists.
    answers = pa.struct([("text", pa.list_(pa.string())), ("answer_start", pa.list_(pa.int32()))])
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("title", pa.string()),
            ("context", pa.string()),
            ("question", pa.string()),
            ("answers", answers),
        ]
    )
    context = "The Eiffel Tower is in Paris. It was built in 1889."
    data = {
        "id": ["5733be284776f41900661182", "5733be284776f4190066117f"],
        "title": ["Eiffel_Tower", "Eiffel_Tower"],
        "context": [context, context],
        "question": [" Where is the Eiffel Tower?", "When was it built?"],
        "answers": [
            {"text": ["Paris", "in Paris"], "answer_start": [23, 20]},
            {"text": ["1889"], "answer_start": [46]},
        ],
    }
    for split in ("train", "validation"):
        write_shard("rajpurkar/squad/plain_text", split, pa.Table.from_pydict(data, schema=schema))


def super_glue_wic() -> None:
    # aps/super_glue: wic/<split>-00000-of-00001.parquet with SuperGLUE WiC's features (word,
    # sentence1, sentence2, start1, start2, end1, end2, idx, label: False 0 / True 1).
    rows = {
        "word": ["bank", "run"],
        "sentence1": ["He sat on the bank of the river.", "I run every morning."],
        "sentence2": ["The bank approved the loan.", "She runs a small shop."],
        "start1": [14, 2],
        "start2": [4, 4],
        "end1": [18, 5],
        "end2": [8, 8],
        "label": [0, 1],
    }
    for split in ("train", "validation", "test"):
        data = {**rows, "idx": [0, 1]}
        if split == "test":  # hidden labels, -1 as GLUE's
            data["label"] = [-1, -1]
        schema = pa.schema(
            [
                ("word", pa.string()),
                ("sentence1", pa.string()),
                ("sentence2", pa.string()),
                *[(name, pa.int32()) for name in ("start1", "start2", "end1", "end2", "idx")],
                ("label", pa.int64()),
            ]
        )
        write_shard("aps/super_glue/wic", split, pa.Table.from_pydict(data, schema=schema))


if __name__ == "__main__":
    glue()
    super_glue_wic()
    sst5()
    semeval_sts()
    wikitext()
    squad()

"""TaskMetadata fields shared by the harness's tasks, so each task file declares only what is its own."""

from __future__ import annotations

from typing import Any

INBEDDER_CITATION = r"""@inproceedings{peng2024answer,
  title     = {Answer is All You Need: Instruction-following Text Embedding via Answering the Question},
  author    = {Peng, Letian and Zhang, Yuwei and Wang, Zilong and Srinivasa, Jayanth and Liu, Gaowen and Wang, Zihan and Shang, Jingbo},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics},
  year      = {2024}
}"""

INBEDDER_REFERENCE = "https://arxiv.org/abs/2402.09642"


def common_metadata(**overrides: Any) -> dict[str, Any]:
    """Defaults for an English, text-only, test-split task; `overrides` wins."""
    fields: dict[str, Any] = dict(
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        date=("2023-01-01", "2024-02-14"),
        task_subtypes=[],
        dialect=[],
        reference=INBEDDER_REFERENCE,
        bibtex_citation=INBEDDER_CITATION,
    )
    fields.update(overrides)
    return fields

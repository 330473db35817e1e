"""The BibTeX entries and reference links of the harness's tasks and suites, each declared once.

Every entry is written in MTEB's canonical BibTeX form, the form MTEB's own citation check compares a task's
`bibtex_citation` and a benchmark's `citation` with: bibtexparser 1.x's writer output (two-space indent,
one `key = {value},` line per field in alphabetical order, a trailing comma after the last field, several
entries ordered by key with one blank line between them). `tests/tasks/test_mteb_validators.py` formats each
registered task's and benchmark's citation that way and requires it unchanged, so an entry added in
another layout fails there with the form to paste.

The entries' content (authors, titles, years, notes) is the one README.md's Citation section gives.
"""

from __future__ import annotations

HARNESS_REFERENCE = "https://github.com/instruct-bench/instruct-bench"
HARNESS_CITATION = r"""@software{instruct_bench_2026,
  author = {{The instruct-bench authors}},
  note = {Built on MTEB},
  title = {instruct-bench: a benchmark harness for instruction-following text embeddings},
  version = {0.1.0},
  year = {2026},
}"""

INBEDDER_REFERENCE = "https://arxiv.org/abs/2402.09642"
INBEDDER_CITATION = r"""@inproceedings{peng2024answer,
  author = {Peng, Letian and Zhang, Yuwei and Wang, Zilong and Srinivasa, Jayanth and Liu, Gaowen and Wang, Zihan and Shang, Jingbo},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics},
  title = {Answer is All You Need: Instruction-following Text Embedding via Answering the Question},
  year = {2024},
}"""

GSTRANSFORM_REFERENCE = "https://arxiv.org/abs/2505.24754"
GSTRANSFORM_CITATION = r"""@article{feng2025gstransform,
  author = {Feng, Yingchaojie and Sun, Yiqun and Sun, Yandong and Zhu, Minfeng and Huang, Qiang and Tung, Anthony K. H. and Chen, Wei},
  journal = {arXiv preprint arXiv:2505.24754},
  title = {Don't Reinvent the Wheel: Efficient Instruction-Following Text Embedding based on Guided Space Transformation},
  year = {2025},
}"""

INSTRUCTOR_REFERENCE = "https://arxiv.org/abs/2212.09741"
INSTRUCTOR_CITATION = r"""@inproceedings{su2023instructor,
  author = {Su, Hongjin and Shi, Weijia and Kasai, Jungo and Wang, Yizhong and Hu, Yushi and Ostendorf, Mari and Yih, Wen-tau and Smith, Noah A. and Zettlemoyer, Luke and Yu, Tao},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2023},
  note = {arXiv:2212.09741},
  title = {One Embedder, Any Task: Instruction-Finetuned Text Embeddings},
  year = {2023},
}"""

METAEOL_REFERENCE = "https://arxiv.org/abs/2402.18458"
METAEOL_CITATION = r"""@inproceedings{lei2024metaeol,
  author = {Lei, Yibin and Wu, Di and Zhou, Tianyi and Shen, Tao and Cao, Yu and Tao, Chongyang and Yates, Andrew},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics},
  note = {arXiv:2402.18458},
  title = {Meta-Task Prompting Elicits Embeddings from Large Language Models},
  year = {2024},
}"""

# The "all" suite draws on every paper: the harness and the four papers, in MTEB's entry order (by key).
FOLLOWIR_REFERENCE = "https://arxiv.org/abs/2403.15246"  # MTEB's FollowIR benchmark's own reference and citation
FOLLOWIR_CITATION = r"""@misc{weller2024followir,
  archiveprefix = {arXiv},
  author = {Orion Weller and Benjamin Chang and Sean MacAvaney and Kyle Lo and Arman Cohan and Benjamin Van Durme and Dawn Lawrie and Luca Soldaini},
  eprint = {2403.15246},
  primaryclass = {cs.IR},
  title = {FollowIR: Evaluating and Teaching Information Retrieval Models to Follow Instructions},
  year = {2024},
}"""
# MTEB's InstructIR task cites it with doubled braces; the fields here are the same, in MTEB's canonical form.
INSTRUCTIR_CITATION = r"""@article{oh2024instructir,
  archiveprefix = {arXiv},
  author = {Hanseok Oh and Hyunji Lee and Seonghyeon Ye and Haebin Shin and Hansol Jang and Changwook Jun and Minjoon Seo},
  eprint = {2402.14334},
  primaryclass = {cs.CL},
  title = {INSTRUCTIR: A Benchmark for Instruction Following of Information Retrieval Models},
  year = {2024},
}"""

ALL_CITATION = "\n\n".join(
    (
        GSTRANSFORM_CITATION,
        HARNESS_CITATION,
        METAEOL_CITATION,
        INSTRUCTIR_CITATION,
        INBEDDER_CITATION,
        INSTRUCTOR_CITATION,
        FOLLOWIR_CITATION,
    )
)

# The generic suite holds InBedder's generic controls and MetaEOL's STS set (MTEB's tasks, instructed).
GENERIC_CITATION = "\n\n".join((METAEOL_CITATION, INBEDDER_CITATION))

# suite -> (reference, citation) of its `mteb.Benchmark`; a suite declared later gets the harness's own.
SUITE_SOURCES: dict[str, tuple[str, str]] = {
    "demo": (HARNESS_REFERENCE, HARNESS_CITATION),
    "awareness": (INBEDDER_REFERENCE, INBEDDER_CITATION),
    "robustness": (INBEDDER_REFERENCE, INBEDDER_CITATION),
    "gstransform": (GSTRANSFORM_REFERENCE, GSTRANSFORM_CITATION),
    "generic": (INBEDDER_REFERENCE, GENERIC_CITATION),
    "generic-sts": (INSTRUCTOR_REFERENCE, INSTRUCTOR_CITATION),
    "metaeol-sts": (METAEOL_REFERENCE, METAEOL_CITATION),
    "inbedder": (INBEDDER_REFERENCE, INBEDDER_CITATION),
    "followir": (FOLLOWIR_REFERENCE, FOLLOWIR_CITATION),
    "instruction-retrieval": (FOLLOWIR_REFERENCE, "\n\n".join((INSTRUCTIR_CITATION, FOLLOWIR_CITATION))),
    "all": (HARNESS_REFERENCE, ALL_CITATION),
}


def suite_sources(suite: str) -> tuple[str, str]:
    """(reference, BibTeX citation) of a suite's benchmark: its paper's, else the harness's own."""
    return SUITE_SOURCES.get(suite, (HARNESS_REFERENCE, HARNESS_CITATION))

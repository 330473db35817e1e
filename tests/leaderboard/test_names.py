"""Issue 40, item 2: look-alike model names by skeleton, not by giving up; mixed scripts in one word.

The probe: 'sentence-transformers/аll-MiniLM-L6-v2' (Cyrillic а) was refused, but the same name with a
trailing U+0323 COMBINING DOT BELOW (or U+00B7 MIDDLE DOT, U+05C4 HEBREW MARK UPPER DOT, or a U+0640
ARABIC TATWEEL inside) was accepted by `bench submit` and `leaderboard build` and shown beside the real
MiniLM row: the check gave up on a name holding one character with no ASCII look-alike. Now names are
compared by what a reader tells apart (marks, invisible characters and signs with no ASCII look-alike
left out: bench/leaderboard/names.py `shown`), and a word may not mix scripts unless the maintainer
allows that name (`--allow-mixed-script`).
"""

from __future__ import annotations

import json
import unicodedata
import zipfile
from pathlib import Path

import pytest

from bench.cli.main import build_parser, main
from bench.leaderboard import build
from bench.leaderboard.names import hidden, problem
from leaderboard_fixtures import copy_results, edit_json, result_files

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
LOOKALIKE = "sentence-transformers/\u0430ll-MiniLM-L6-v2"  # Cyrillic а (U+0430) for the Latin a
READS_AS_MINILM = f"reads as the ASCII name '{MINILM}'"
DEMO = ("DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering")
# The probe's four names: a mark, a dot, a Hebrew point at the end; a tatweel inside.
PROBES = {
    "U+0323 at the end": LOOKALIKE + "\u0323",
    "U+00B7 at the end": LOOKALIKE + "\u00b7",
    "U+05C4 at the end": LOOKALIKE + "\u05c4",
    "U+0640 inside": LOOKALIKE.replace("Mini", "Mini\u0640"),
}


def _renamed(demo: Path, folder: Path, name: str) -> Path:
    """The demo results with the default setting's model renamed to `name` (the `none` setting stays MiniLM)."""
    root = copy_results(demo, folder)
    for task in DEMO:
        _, record = result_files(root, task)
        edit_json(record, lambda d: d["model"].update(name=name))
    return root


@pytest.mark.parametrize("name", list(PROBES.values()), ids=list(PROBES))
@pytest.mark.parametrize("board", [[], [MINILM]], ids=["alone", "beside-MiniLM"])
def test_the_probes_marks_and_signs_do_not_save_a_lookalike(name, board):
    found = problem(name, "r.json", board)
    assert found is not None and found.reason == "lookalike_name", name
    (added,) = set(name) - set(LOOKALIKE)
    assert READS_AS_MINILM in found.message and f"U+{ord(added):04X}" in found.message, found.message


def test_the_probes_are_refused_by_submit_and_build(demo_results, tmp_path, capsys):
    """As the issue ran them: `bench submit` packs nothing, `leaderboard build` lists each as rejected and
    shows MiniLM alone."""
    roots = {label: _renamed(demo_results, tmp_path / f"p{i}", name) for i, (label, name) in enumerate(PROBES.items())}
    for label, root in roots.items():
        packed = tmp_path / f"{root.name}.zip"
        assert main(["submit", str(root), "--out", str(packed)]) == 2, label
        out, _ = capsys.readouterr()
        assert READS_AS_MINILM in out and not packed.exists(), label
    result = build([*roots.values(), demo_results], tmp_path / "site")
    assert [r.submission for r in result.rejected] == [str(p) for p in roots.values()]
    for report in result.rejected:
        assert {p.reason for p in report.problems} == {"lookalike_name"}
        assert all(READS_AS_MINILM in p.message for p in report.problems), report.summary()
    assert {m["name"] for m in result.data["models"]} == {MINILM}


def _strip(glyph: str) -> str:
    return glyph.replace("\u200e", "").replace("\u200f", "")  # the package's display marks around RTL glyphs


def _generated() -> list[str]:
    """Every character of U+0080-U+2FFF that is a mark (Mn, Me), or that is not a letter or digit (Lm
    counts as not) and, decomposed, has no entry in Unicode's confusables (as the confusable-homoglyphs
    package lists them): NFKC-stable, not hidden (rule 1 refuses those). Found from the Unicode
    categories and the package's data here, not from the code under test."""
    from confusable_homoglyphs.confusables import confusables_data

    linked = {_strip(g) for k, gs in confusables_data.items() for g in [k, *(x["c"] for x in gs)]}
    out = []
    for c in map(chr, range(0x80, 0x3000)):
        category = unicodedata.category(c)
        if hidden(c) or unicodedata.normalize("NFKC", c) != c:
            continue
        unlinked = all(
            unicodedata.category(d) in {"Mn", "Me"} or d not in linked for d in unicodedata.normalize("NFD", c)
        )
        if category in {"Mn", "Me"} or (unlinked and (category == "Lm" or category[0] not in "LN")):
            out.append(c)
    return out


def test_a_generated_sample_of_marks_and_signs_never_saves_a_lookalike():
    """Every second generated character (over 1,500: marks, spacing marks, modifier letters, punctuation,
    symbols), at the end of the Cyrillic imitation and inside it, alone and beside MiniLM; and in MiniLM's
    own name with MiniLM on the board. Each is refused, naming MiniLM."""
    sample = _generated()[::2]
    assert len(sample) >= 200 and {unicodedata.category(c) for c in sample} >= {"Mn", "Mc", "Lm", "Po", "So", "Sm"}
    missed = []
    for c in sample:
        cases = [
            (LOOKALIKE + c, [], READS_AS_MINILM),
            (LOOKALIKE.replace("Mini", "Mini" + c), [MINILM], READS_AS_MINILM),
            (MINILM.replace("Mini", "Mini" + c), [MINILM], f"looks like '{MINILM}', a name already on the board"),
        ]
        for name, board, words in cases:
            found = problem(unicodedata.normalize("NFKC", name), "r.json", board)  # as a submitter would write it
            if found is None or words not in found.message:
                missed.append(f"U+{ord(c):04X} {unicodedata.name(c, '')}: {found}")
    assert not missed, f"{len(missed)} not refused, e.g. {missed[:5]}"


# Honest names, each with an imitation of it that only adds a mark or a sign: the name is accepted
# (beside MiniLM), its imitation refused once the name is on the board.
HONEST = [
    "\u667a\u6e90/\u4e2d\u6587\u5411\u91cf\u6a21\u578b",  # all Chinese
    "ai-forever/\u0420\u0443\u0441\u0441\u043a\u0438\u0439-\u044d\u043c\u0431\u0435\u0434\u0434\u0435\u0440",  # Cyrillic words
    "org/\u65e5\u672c\u8a9e\u30e2\u30c7\u30eb",  # Japanese: kanji and katakana in one word
    "BAAI/bge\u4e2d\u6587",  # Latin and Han in one word: UTS #39 allows it
    "org/caf\u00e9-embed",  # Latin with an accent that imitates nothing
    "nlpaueb/\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03cc-BERT",  # a Greek word beside a Latin one
]


@pytest.mark.parametrize("name", HONEST)
@pytest.mark.parametrize("sign", ["\u0323", "\u00b7", "\u0640"], ids=["dot-below", "middle-dot", "tatweel"])
def test_an_honest_name_is_accepted_and_its_marked_copy_is_not(name, sign):
    assert problem(name, "r.json", [MINILM]) is None
    copy = unicodedata.normalize("NFKC", name + sign)
    found = problem(copy, "r.json", [MINILM, name])
    assert found is not None and found.reason == "lookalike_name", copy
    assert f"looks like '{name}'" in found.message or "mixes scripts" in found.message, found.message


MIXED = "acme/\u03bbogos-embed"  # Greek λ and Latin 'ogos' in one word


@pytest.mark.parametrize(
    ("name", "word", "scripts"),
    [
        (MIXED, "\u03bbogos", "Greek, Latin"),
        (MINILM.replace("Mini", "Mini\u0640"), "Mini\u0640LM", "Latin, Adlam, Arabic"),  # tatweel in a Latin word
        (MINILM + "\u05c4", "v2\u05c4", "Hebrew"),  # a Hebrew point on a Latin word
        ("org/model\u0436", "model\u0436", "Latin, Cyrillic"),  # ж: no ASCII look-alike
    ],
)
def test_a_word_mixing_scripts_is_refused_unless_the_maintainer_allows_it(name, word, scripts):
    found = problem(name, "r.json")
    assert found is not None and found.reason == "lookalike_name", name
    assert f"mixes scripts within the word '{word}' (" in found.message and scripts in found.message, found.message
    assert "--allow-mixed-script" in found.message
    assert problem(name, "r.json", allowed={name}) is None
    assert problem(name, "r.json", allowed={"org/other"}) is not None


def test_an_allowance_never_admits_a_lookalike():
    for name in PROBES.values():
        found = problem(name, "r.json", [MINILM], allowed={name})
        assert found is not None and READS_AS_MINILM in found.message


def test_allow_mixed_script_on_submit_build_and_verify(demo_results, tmp_path, capsys):
    root = _renamed(demo_results, tmp_path / "sub", MIXED)
    packed = tmp_path / "mixed.zip"
    assert main(["submit", str(root), "--out", str(packed)]) == 2
    out, _ = capsys.readouterr()
    assert "mixes scripts within the word '\u03bbogos' (Greek, Latin)" in out and not packed.exists()
    assert main(["submit", str(root), "--out", str(packed), "--allow-mixed-script", MIXED]) == 0
    assert zipfile.is_zipfile(packed)

    def built(*extra: str) -> dict:
        site = tmp_path / f"site{len(extra)}"
        assert main(["leaderboard", "build", "--results", str(packed), "--out", str(site), *extra]) == 0
        capsys.readouterr()
        return json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))

    refused = built()
    assert MIXED not in {m["name"] for m in refused["models"]}
    assert [p["reason"] for r in refused["rejected"] for p in r["problems"]] == ["lookalike_name"]
    allowed = built("--allow-mixed-script", MIXED)
    assert MIXED in {m["name"] for m in allowed["models"]} and not allowed["rejected"]
    # verify checks the names as build does: refused before any re-run, and the option is there to allow it
    assert main(["leaderboard", "verify", str(packed), "--out", str(tmp_path / "v.json")]) == 2
    assert "mixes scripts within the word" in capsys.readouterr().out
    parsed = build_parser().parse_args(["leaderboard", "verify", str(packed), "--allow-mixed-script", MIXED])
    assert parsed.allow_mixed_script == [MIXED]


def test_script_sets_cover_every_assigned_character():
    """Every character Python's Unicode knows is in a script the module asks about, or Common/Inherited:
    none falls to 'Unknown' (the script names come from the confusable-homoglyphs package, the
    Script_Extensions from `regex`; a newer `regex` or Python adds scripts the other may lack)."""
    import regex

    from bench.leaderboard.scripts import _scripts, script_set

    known = "".join(rf"\p{{scx={n}}}" for n in [*_scripts(), "Common", "Inherited"])
    assigned = "".join(c for c in map(chr, range(0x110000)) if unicodedata.category(c) not in {"Cn", "Cs", "Co"})
    assert regex.findall(f"[^{known}]", assigned) == []
    assert script_set("a") == {"LATIN"} and script_set("1") is None and script_set("\u20dd") is None
    assert {"ARABIC", "SYRIAC"} <= (script_set("\u0640") or set())  # Script Common, Script_Extensions Arabic...
    assert script_set("\u30fc") == {"HIRAGANA", "KATAKANA", "JPAN"}
    assert script_set("\u4e2d") == {"HAN", "JPAN", "KORE", "HANB"}

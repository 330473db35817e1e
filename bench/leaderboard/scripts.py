"""The writing systems of a model name's words: UTS #39's "highly restrictive" level, word by word.

A word that mixes scripts ('аll', a Cyrillic 'а' before two Latin 'l's; 'MiniـLM' with an Arabic
tatweel) is how a look-alike is built from letters that no confusables entry links to ASCII, so
`bench/leaderboard/names.py` refuses it unless the maintainer allows that name (`--allow-mixed-script
NAME`). Honest names keep their scripts apart: 'nlpaueb/Ελληνικό-BERT' has a Greek word and a Latin
one; 'BAAI/bge-中文' a Latin word and a Han one.

The rule is UTS #39 section 5.2's "highly restrictive" restriction level, applied to each word (a run
of letters, marks and digits: '/', '-', '_', '.' and spaces separate words), with each character's
Script_Extensions (section 5.1):

- a character whose Script_Extensions is Common or Inherited (digits, punctuation, most combining
  accents) counts for every script;
- Han, Hiragana, Katakana, Hangul and Bopomofo are augmented with the writing systems they belong
  to (Han with Jpan, Kore and Hanb; Hiragana and Katakana with Jpan; Hangul with Kore; Bopomofo with
  Hanb), so Japanese kanji-and-kana words are one system;
- a word passes when one script is common to all its characters, or when its characters other than
  the Latin ones share Japanese, Korean or Han-with-Bopomofo (Latin + Han + Hiragana + Katakana; Latin
  + Han + Hangul; Latin + Han + Bopomofo: 'bge中文').

Where the data come from: each character's Script_Extensions from the `regex` package
(`\\p{scx=...}`, kept up to date with Unicode; Python's `unicodedata` has no script property), the
names of the scripts to ask about from the `confusable-homoglyphs` package's categories data
(Unicode's Scripts.txt, `iso_15924_aliases`), the package that already gives the confusables. Both
are dependencies already; `unicodedata2` and `fontTools.unicodedata` would be new ones for the same
data. A character in none of those scripts (a script newer than the package's data) counts as a
script of its own, "Unknown": never the same as Latin.
"""

from __future__ import annotations

from functools import cache, lru_cache

import regex  # type: ignore[import-untyped]  # ships no type information

# UTS #39 5.1: the writing systems a script belongs to, added to its set before sets are intersected.
_AUGMENTED = {
    "HAN": ("JPAN", "KORE", "HANB"),
    "HIRAGANA": ("JPAN",),
    "KATAKANA": ("JPAN",),
    "HANGUL": ("KORE",),
    "BOPOMOFO": ("HANB",),
}
_ANY = regex.compile(r"[\p{scx=Common}\p{scx=Inherited}]")  # counts for every script
_WORDS = regex.compile(r"[\p{L}\p{M}\p{N}]+")


@cache
def _scripts() -> dict[str, regex.Pattern]:
    """Every script Unicode's Scripts.txt names (as the confusable-homoglyphs package lists them), but
    Common and Inherited, each with a pattern matching the characters whose Script_Extensions hold it."""
    from confusable_homoglyphs.categories import categories_data  # type: ignore[import-untyped]  # ships no type information

    names = [n for n in categories_data["iso_15924_aliases"] if n not in {"COMMON", "INHERITED"}]
    return {n: regex.compile(rf"\p{{scx={n}}}") for n in names}


@lru_cache(maxsize=4096)
def script_set(c: str) -> frozenset[str] | None:
    """The augmented Script_Extensions of `c` (upper-case names, 'LATIN', 'HAN', 'JPAN'); None for a
    character that counts for every script (Common, Inherited)."""
    if _ANY.match(c):
        return None
    found = {n for n, pattern in _scripts().items() if pattern.match(c)} or {"UNKNOWN"}
    return frozenset(found.union(*(_AUGMENTED.get(n, ()) for n in found)))


def _resolved(sets: list[frozenset[str]]) -> frozenset[str] | None:
    """The scripts common to all `sets` (None when there is none to intersect: every script)."""
    return frozenset.intersection(*sets) if sets else None


def highly_restrictive(word: str) -> bool:
    """True when `word` is single-script or one of UTS #39's Latin + CJK combinations (see the module docstring)."""
    sets = [s for s in map(script_set, word) if s is not None]
    if _resolved(sets) != frozenset():
        return True
    others = _resolved([s for s in sets if "LATIN" not in s])
    return others is not None and bool(others & {"JPAN", "KORE", "HANB"})


def mixed_word(name: str) -> tuple[str, list[str]] | None:
    """The first word of `name` that mixes scripts and the scripts it mixes, in the order they appear
    ('Cyrillic', 'Latin'); None when every word keeps to one (UTS #39 highly restrictive)."""
    for word in _WORDS.findall(name):
        if not highly_restrictive(word):
            found = [n for c in word for n in sorted(script_set(c) or ()) if n not in {"JPAN", "KORE", "HANB"}]
            return word, [n.replace("_", " ").title() for n in dict.fromkeys(found)]  # in order of appearance
    return None

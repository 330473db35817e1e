"""Model names that imitate other names: NFKC, Unicode confusables (UTS #39 skeleton), mixed scripts.

A leaderboard row is known by its model name, and a hub name links to its model card. A name that
only looks like another ('sentence-transformers/аll-MiniLM-L6-v2', whose first 'а' is Cyrillic) shows
as a second row that readers take for the real model. The rule, checked on every model name of a
submission (reason `lookalike_name`, the message naming the name imitated):

1. The name is NFKC-normalised and holds no control or invisible character: Unicode categories Cc,
   Cf, Co, Cs, Cn (zero-width spaces, bidi overrides, private use, unassigned), and the characters
   that render as nothing (`invisible`): Unicode's Default_Ignorable_Code_Point (the combining
   grapheme joiner U+034F, the Hangul fillers U+115F, U+1160 and U+3164, the Khmer inherent vowels
   U+17B4 and U+17B5, the variation selectors U+FE00-FE0F and U+E0100-E01EF, the Mongolian ones
   U+180B-180D and U+180F: letters and marks, not format characters, so no category test finds
   them), the braille blank U+2800 and the enclosing marks (category Me: U+20DD COMBINING ENCLOSING
   CIRCLE and its kin, which enclose nothing when they follow nothing visible and which many fonts
   draw as nothing). Each of them inserted in 'sentence-transformers/all-MiniLM-L6-v2' renders as
   that name. NFKC folds compatibility look-alikes (fullwidth 'ａ', mathematical '𝐚',
   ligatures) into one spelling.
2. A name that is not ASCII must not pass for an ASCII name: when, of the characters a reader tells
   apart (`shown`, below), at least one is a non-ASCII look-alike of an ASCII character (its UTS #39
   confusable class holds one: Cyrillic 'а' for 'a', Greek 'Ο' for 'O', an en dash for '-') and every
   other is ASCII or such a look-alike, it is rejected, naming the ASCII name it reads as. A mark, a
   dot or a sign beside the look-alikes does not save it: 'sentence-transformers/аll-MiniLM-L6-v2'
   with U+0323 COMBINING DOT BELOW, U+00B7 MIDDLE DOT, U+05C4 HEBREW MARK UPPER DOT at its end or
   U+0640 ARABIC TATWEEL inside still reads as MiniLM's name. A name with a letter or digit that
   nothing in ASCII resembles (Chinese, most Greek or Cyrillic words) passes this rule, and so does an
   ASCII name with accents and no look-alike letter ('org/café-embed').
3. A name that is not ASCII must not share its skeleton with another name on the board (accepted
   earlier in the same build, or elsewhere in the same submission): two spellings that render alike.
   The first one given wins, as for duplicates; the later one is rejected.
4. No word of a name mixes scripts ('аll': Cyrillic and Latin), by UTS #39's "highly restrictive"
   level (bench/leaderboard/scripts.py, which says where its data come from), unless the maintainer
   allows that exact name (`--allow-mixed-script NAME`): a look-alike can be built from letters that
   no confusables entry links to ASCII, and honest names keep their scripts in separate words.

ASCII names are not compared with each other: each is its own hub id (the hub allows nothing else),
and the few ASCII pairs UTS #39 calls confusable ('l', 'I' and '1'; 'rn' and 'm') are left to the
reader, who sees the model card's address.

What a reader tells apart (`shown`): the name in NFD without the characters that only modify,
decorate or hide the ones beside them, so that a look-alike cannot escape the comparison by adding
one: the combining marks (Mn, Me: accents, dots, Hebrew and Arabic points), the invisible characters
of rule 1, and every character that is neither a letter nor a digit of its own (Lu, Ll, Lt, Lo, Nd,
Nl, No) and has no ASCII look-alike: spacing marks (Mc), modifier letters (Lm: the tatweel, which
only stretches its neighbours), punctuation, symbols and spaces (U+00B7). The cost: two
names that differ only in such characters ('café' and 'cafe', or two words differing by a vowel
sign) have one skeleton, so the later one is refused beside the earlier one.

Skeleton (UTS #39 section 4, on what a reader tells apart): `shown`, each character replaced by its
class's prototype, `shown` again. UTS #39 removes only the Default_Ignorable_Code_Point characters;
the marks and signs are removed here too, for the reason above. The classes come from the
confusables data of the `confusable-homoglyphs` package (Unicode's confusables.txt, a dependency
already, rather than a table of our own): characters linked by a one-character mapping form a class,
whose prototype is the member the others map to (the one with most links; ties by code point); a
character mapped to a sequence ('m' to 'rn') becomes the sequence.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Container, Iterable
from functools import cache, lru_cache

import regex  # type: ignore[import-untyped]  # ships no type information

from bench.leaderboard.schema import Plain, Problem
from bench.leaderboard.scripts import mixed_word

HIDDEN = {"Cc", "Cf", "Co", "Cs", "Cn"}  # control, format (zero-width, bidi), private use, surrogate, unassigned
REASON = "lookalike_name"
# What renders as nothing: Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt; Python's
# unicodedata lacks the property, the `regex` module carries it), the braille blank, enclosing marks.
_INVISIBLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\u2800\p{Me}]")
MARKS = {"Mn", "Me"}  # combining marks: they sit on the character before them
SPELLING = {"Lu", "Ll", "Lt", "Lo", "Nd", "Nl", "No"}  # letters and digits of their own (not Lm, modifier letters)


def invisible(c: str) -> bool:
    """True for a character that renders as nothing (see the module docstring, rule 1)."""
    return _INVISIBLE.match(c) is not None


def hidden(c: str) -> bool:
    """True for a character a name may not hold: a control, format, private-use, surrogate or unassigned
    one (HIDDEN), or an invisible one."""
    return unicodedata.category(c) in HIDDEN or invisible(c)


def _strip(glyph: str) -> str:
    """The package wraps right-to-left glyphs in LEFT-TO-RIGHT MARKs for display; they are not part of them."""
    return glyph.replace("\u200e", "").replace("\u200f", "")


@cache
def _classes() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(character -> its prototype, character -> its one ASCII look-alike, character -> the sequence
    it maps to), built once from the package's data."""
    from confusable_homoglyphs.confusables import confusables_data  # type: ignore[import-untyped]  # ships no type information

    parent: dict[str, str] = {}
    links: dict[str, int] = {}
    sequences: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for char, glyphs in confusables_data.items():
        char, targets = _strip(char), [_strip(g["c"]) for g in glyphs]
        if len(char) != 1:
            continue
        links[char] = len(targets)
        if len(targets) == 1 and len(targets[0]) > 1:
            sequences[char] = targets[0]
        for target in targets:
            if len(target) == 1:
                parent[find(char)] = find(target)
    members: dict[str, list[str]] = {}
    for c in parent:
        members.setdefault(find(c), []).append(c)
    prototype, ascii_alike = {}, {}
    for group in members.values():
        proto = min(group, key=lambda c: (-links.get(c, 0), ord(c)))
        plain = [c for c in group if c.isascii()]
        alike = proto if proto.isascii() else (min(plain) if plain else None)
        for c in group:
            prototype[c] = proto
            if alike is not None:
                ascii_alike[c] = alike
    return prototype, ascii_alike, sequences


def told_apart(c: str) -> bool:
    """True for a character `shown` keeps (see the module docstring): ASCII, a letter or digit of its
    own, or a look-alike of an ASCII character; not a mark, an invisible character or another sign."""
    if c.isascii():
        return True
    if unicodedata.category(c) in MARKS or invisible(c):
        return False
    return unicodedata.category(c) in SPELLING or _ascii_alike(c) is not None


def shown(name: str) -> str:
    """`name` in NFD with only the characters a reader tells apart (`told_apart`)."""
    return "".join(c for c in unicodedata.normalize("NFD", name) if told_apart(c))


@lru_cache(maxsize=4096)
def skeleton(name: str) -> str:
    """UTS #39's skeleton of what a reader tells apart: two names with one skeleton render alike."""
    prototype, _, sequences = _classes()
    return shown("".join(sequences.get(c) or prototype.get(c, c) for c in shown(name)))


def ascii_reading(name: str) -> str | None:
    """The ASCII name a non-ASCII `name` can pass for (each non-ASCII character it shows by its ASCII
    look-alike, at least one of them); None when `name` is ASCII, shows only ASCII characters (marks or
    signs on an ASCII name: rules 3 and 4 judge it) or shows a character nothing in ASCII resembles."""
    if name.isascii():
        return None
    letters = shown(name)
    if letters.isascii():
        return None
    out: list[str] = []
    for c in letters:
        alike = c if c.isascii() else _ascii_alike(c)
        if alike is None:
            return None
        out.append(alike)
    return "".join(out)


def _ascii_alike(c: str) -> str | None:
    """An ASCII character (or sequence, for 'ɱ'-like ones mapped to one) that `c` can pass for."""
    _, ascii_alike, sequences = _classes()
    sequence = sequences.get(c)
    return sequence if sequence is not None and sequence.isascii() else ascii_alike.get(c)


def _described(name: str, *, hidden_only: bool = False) -> Plain:
    """The non-ASCII (or hidden) characters of `name` by code point and Unicode name: what the eye misses;
    with `hidden_only`, only the hidden ones, so that none is left out behind other non-ASCII letters."""
    odd = list(dict.fromkeys(c for c in name if hidden(c) or not (hidden_only or c.isascii())))
    shown = [f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in odd[:3]]
    return Plain(", ".join(shown) + (f" and {len(odd) - 3} more" if len(odd) > 3 else ""))


def problem(name: str, file: str, others: Iterable[str] = (), allowed: Container[str] = frozenset()) -> Problem | None:
    """Why `name` may not join a board holding `others` (see the module docstring); None when it may.
    `allowed`: names whose words may mix scripts (the maintainer's `--allow-mixed-script`, rule 4)."""
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        return Problem.of(REASON, file, "model.name", "{} is not in Unicode NFKC form, which reads {}", name, normal)
    if any(hidden(c) for c in name):
        return Problem.of(
            REASON,
            file,
            "model.name",
            "{} holds a control or invisible character ({}); it shows as {}",
            name,
            _described(name, hidden_only=True),
            "".join(c for c in name if not hidden(c)),
        )
    reading = ascii_reading(name)
    if reading is not None:
        return Problem.of(
            REASON, file, "model.name", "{} reads as the ASCII name {} ({})", name, reading, _described(name)
        )
    if not name.isascii():
        for other in others:
            if other != name and skeleton(other) == skeleton(name):
                return Problem.of(
                    REASON,
                    file,
                    "model.name",
                    "{} looks like {}, a name already on the board ({})",
                    name,
                    other,
                    _described(name),
                )
        mixed = mixed_word(name)
        if mixed is not None and name not in allowed:
            return Problem.of(
                REASON,
                file,
                "model.name",
                "{} mixes scripts within the word {} ({}), as look-alikes do; the leaderboard's maintainer "
                "allows a genuine one with --allow-mixed-script NAME",
                name,
                mixed[0],
                Plain(", ".join(mixed[1][:4]) + (" and more" if len(mixed[1]) > 4 else "")),
            )
    return None


def problems(names: dict[str, str], board: Iterable[str] = (), allowed: Container[str] = frozenset()) -> list[Problem]:
    """A `lookalike_name` problem for each of a submission's names (name -> a run record naming it)
    that imitates another: an ASCII name, a name on `board`, or another name of the same submission;
    or that mixes scripts within a word and is not in `allowed`."""
    others = list(dict.fromkeys([*board, *names]))  # the board repeats a name once per task
    return [p for name, file in sorted(names.items()) if (p := problem(name, file, others, allowed)) is not None]

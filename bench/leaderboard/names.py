"""Model names that imitate other names: NFKC normalisation and Unicode confusables (UTS #39).

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
2. A name that is not ASCII must not pass for an ASCII name: when every non-ASCII character of it
   has an ASCII look-alike (its UTS #39 confusable class holds an ASCII character: Cyrillic 'а' for
   'a', Greek 'Ο' for 'O', an en dash for '-'), it is rejected, naming the ASCII name it reads as.
   A name with at least one character that nothing in ASCII resembles (Chinese, most Greek or
   Cyrillic words), alone or mixed with Latin, passes this rule.
3. A name that is not ASCII must not share its UTS #39 skeleton with another name on the board
   (accepted earlier in the same build, or elsewhere in the same submission): two spellings that
   render alike. The first one given wins, as for duplicates; the later one is rejected.

ASCII names are not compared with each other: each is its own hub id (the hub allows nothing else),
and the few ASCII pairs UTS #39 calls confusable ('l', 'I' and '1'; 'rn' and 'm') are left to the
reader, who sees the model card's address.

Skeleton (UTS #39 section 4): NFD, invisible characters removed (UTS #39 removes the
Default_Ignorable_Code_Point ones; `invisible` adds the braille blank and the enclosing marks), each
character replaced by its class's prototype, NFD again. The
classes come from the confusables data of the `confusable-homoglyphs` package (Unicode's
confusables.txt): characters linked by a one-character mapping form a class, whose prototype is the
member the others map to (the one with most links; ties by code point); a character mapped to a
sequence ('m' to 'rn') becomes the sequence.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache

import regex  # type: ignore[import-untyped]  # ships no type information

from bench.leaderboard.schema import Plain, Problem

HIDDEN = {"Cc", "Cf", "Co", "Cs", "Cn"}  # control, format (zero-width, bidi), private use, surrogate, unassigned
REASON = "lookalike_name"
# What renders as nothing: Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt; Python's
# unicodedata lacks the property, the `regex` module carries it), the braille blank, enclosing marks.
_INVISIBLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\u2800\p{Me}]")


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


@lru_cache(maxsize=4096)
def skeleton(name: str) -> str:
    """UTS #39's skeleton: two names with one skeleton render alike."""
    prototype, _, sequences = _classes()
    shown = (c for c in unicodedata.normalize("NFD", name) if not invisible(c))
    mapped = "".join(sequences.get(c) or prototype.get(c, c) for c in shown)
    return unicodedata.normalize("NFD", mapped)


def ascii_reading(name: str) -> str | None:
    """The ASCII name a non-ASCII `name` can pass for (each non-ASCII character by its ASCII
    look-alike); None when `name` is ASCII or has a character nothing in ASCII resembles."""
    if name.isascii():
        return None
    out: list[str] = []
    for c in name:
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


def problem(name: str, file: str, others: Iterable[str] = ()) -> Problem | None:
    """Why `name` may not join a board holding `others` (see the module docstring); None when it may."""
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
    return None


def problems(names: dict[str, str], board: Iterable[str] = ()) -> list[Problem]:
    """A `lookalike_name` problem for each of a submission's names (name -> a run record naming it)
    that imitates another: an ASCII name, a name on `board`, or another name of the same submission."""
    others = list(dict.fromkeys([*board, *names]))  # the board repeats a name once per task
    return [p for name, file in sorted(names.items()) if (p := problem(name, file, others)) is not None]

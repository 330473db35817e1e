"""The registered model families: each `BaseEncoder` subclass that sets `family` adds itself here when its
class is defined (`BaseEncoder.__init_subclass__`).

Its own module so that the encoder base class can register a subclass without importing
`bench.adapters.registry`, which names `BaseEncoder` in its types: neither of the two imports the other back
(tests/test_layers.py). The registry reads these dicts as its `FAMILIES` and `FAMILY_ALIASES`.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from bench.core.errors import ConfigError


class Family(Protocol):
    """What registration reads of a family class."""

    family: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]]


FAMILIES: dict[str, type[Family]] = {}
FAMILY_ALIASES: dict[str, str] = {}


def register_family(cls: type[Family]) -> None:
    """Add a family class under its name and aliases; a second class for one name is an error."""

    def owner(c: type) -> str:
        return f"{c.__module__}.{c.__qualname__}"

    for key in (cls.family, *cls.aliases):
        earlier = FAMILIES.get(key) or FAMILIES.get(FAMILY_ALIASES.get(key, ""))
        if earlier is not None and owner(earlier) != owner(cls):
            raise ConfigError(
                f"Duplicate model family {key!r}: {owner(cls)} and {owner(earlier)}. Family names and "
                f"aliases must be unique; rename one (the class attribute `family` or `aliases`)."
            )
    FAMILIES[cls.family] = cls
    FAMILY_ALIASES.update(dict.fromkeys(cls.aliases, cls.family))

"""What a setting is: its options, the cache key it files vectors under, and the MTEB experiment it is named by.

A family's options are its constructor's keyword parameters (`bench/adapters/options.py`); the ones that change
vectors (all but `runtime_options` and what `inert_options` says this configuration does not use) make the
cache fingerprint and the experiment: one declaration, nothing to keep in step by hand. `Setting` is the
encoder's part that reads them; it holds only the options as given (`_given_options`, recorded by the encoder's
`__new__`) and the experiment's defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from bench.adapters.options import (
    experiment_label,
    family_options,
    fit_experiment,
    option_defaults,
    public_value,
    vector_options,
)
from bench.core.redact import redact_value

if TYPE_CHECKING:
    from bench.core.json_types import JSONObject


class Setting:
    """Options, cache key and experiment name of an encoder (see module docstring)."""

    family: ClassVar[str]
    results_name_family: ClassVar[bool] = True
    experiment_always: ClassVar[tuple[str, ...]] = ()
    name: str
    revision: str
    _given_options: dict[str, Any]
    _experiment_defaults: dict[str, Any]
    _content: str | None

    if TYPE_CHECKING:  # the encoder's device part answers these (bench.adapters.device.Placement)

        def precision(self) -> JSONObject: ...

        @property
        def dtype(self) -> str: ...

    def options(self) -> JSONObject:
        """Every option's value: the constructor's defaults overridden by what was given."""
        given, cls = getattr(self, "_given_options", {}), _cls(self)
        return {**option_defaults(cls), **{k: v for k, v in given.items() if k in family_options(cls)}}

    def vector_options(self) -> JSONObject:
        """The options that change vectors: all but the family's `runtime_options` and `inert_options()`,
        with the dtype as it resolves on this device (`precision`)."""
        inert = self.inert_options()
        out = {k: v for k, v in vector_options(_cls(self), self.options()).items() if k not in inert}
        return {**out, **self.precision()} if "dtype" in out else out

    def content_id(self) -> str | None:
        """What the model is, as content: a local model's files' sha256, or a hub id at its revision
        (bench/adapters/identity.py). A family whose vectors come from elsewhere says so in `identity_extras`."""
        return self._content

    def inert_options(self) -> set[str]:
        """Options this configuration does not use (generation settings of a one-pass readout). Leaving
        one out only makes two identical settings count as different, never the reverse."""
        return set()

    def experiment(self) -> JSONObject:
        """MTEB experiment kwargs: the family (see `results_name_family`) and every vector option that
        differs from its default, as filesystem-safe labels. Empty for a family's default setting."""
        defaults = {**option_defaults(_cls(self)), **self._experiment_defaults}
        out: JSONObject = {"family": self.family} if self.results_name_family else {}
        for key, value in sorted(self.vector_options().items()):
            if value != defaults.get(key) or key in self.experiment_always:
                out[key] = experiment_label(value)
        return fit_experiment(out)

    def identity_extras(self) -> JSONObject:
        """What else decides a vector besides the options (a re-encoder's weights, an endpoint)."""
        return {}

    def settings(self) -> JSONObject:
        """Options recorded in results (local paths shortened to their last component; `dtype` as resolved)."""
        hidden = ("cache_dir", "use_cache", "show_progress_bar")
        options = self.options()
        if "dtype" in options:
            options["dtype"] = self.dtype
        return {k: redact_value(public_value(v)) for k, v in options.items() if k not in hidden}

    @property
    def fingerprint(self) -> JSONObject:
        """The cache's identity of this setting: the model's content (never only its name), family, every
        vector option (dtype as resolved) and what else decides a vector (`identity_extras`)."""
        options = {k: public_value(v) for k, v in sorted(self.vector_options().items())}
        content = self.content_id()
        return {
            "family": self.family,
            "model": self.name,
            "revision": self.revision,
            **({"content": content} if content else {}),
            **options,
            **self.identity_extras(),
        }


def _cls(setting: Setting) -> type:
    """The family class, whose constructor declares the options (typed as a plain, hashable class)."""
    return type(setting)


def naming_defaults(cls: type, given: dict[str, Any] | None) -> dict[str, Any]:
    """The defaults an experiment is named against: the family's own, overridden by `given` (a registry entry's
    options: its setting is named by what differs from them)."""
    out = dict(given or {})
    if {**option_defaults(cls), **out}.get("dtype") == "auto":
        # `auto` names no setting: a run is named by the dtype it resolves to, and float32 (a CPU's auto, and
        # what every GPU run was before `auto` became the default) is the unnamed setting
        out["dtype"] = "float32"
    return out

"""GSTransform (Feng et al. 2025, "Don't Reinvent the Wheel", §3): instruction-specific transforms of a
generic embedder's vectors, so a new instruction needs no re-encoding of the corpus.

Training (`train_transform`, CLI `bench gstransform train`):
    sample texts -> label construction with an LLM (bench/adapters/gstransform_labels.py) -> a linear
    encoder-decoder trained on the sample's generic embeddings with
        L = 1.0 * contrastive(z, labels) + 1.0 * reconstruction(decoder(z), x)
    contrastive = mean over pairs of  y_ij d_ij^2 + (1 - y_ij) max(0, margin - d_ij)^2  (Euclidean d),
    reconstruction = mean squared error; 80/20 train/validation split, early stopping on validation loss.
    The paper gives the loss form, weights 1.0/1.0, the split and early stopping; the margin, sizes,
    optimiser and initialisation are not in the text available here and are recorded in each config.

Applying (`GSTransformEncoder`, spec `gstransform:TRANSFORM_DIR`): the base encoder embeds each text
without instruction (so its vectors come from the shared embedding cache when that model has seen the
texts before), then the transform trained for the row's instruction maps them: z = W x + b.

A transform directory holds one sub-folder per instruction: `transform.safetensors` (weights, never
pickle), `config.json` (instruction, the instructions it serves, base model and its vector fingerprint,
hyper-parameters, taxonomy, training history, LLM endpoint, prompts and their sha256), `labels.jsonl`
(the labelled sample, for inspection).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.adapters.base import BaseEncoder
from bench.core.bounded import MAX_SOURCE_BYTES, load_json_bounded, read_at_most
from bench.core.errors import ConfigError, ModelLoadError
from bench.core.fileio import atomic_write, atomic_write_json, atomic_write_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    import torch
    from mteb.types import PromptType

    from bench.adapters.gstransform_labels import LabelledSample
    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject
    from bench.core.llm_client import LLMClient

logger = logging.getLogger(__name__)

WEIGHTS = "transform.safetensors"
CONFIG = "config.json"
LABELS = "labels.jsonl"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class TrainSettings:
    """Hyper-parameters of label construction and training (paper defaults where it states them)."""

    sample_size: int = 3000  # §3.1: "e.g., 3,000 texts"
    n_clusters: int = 50  # §3.1 default K (Table 5's K=50 column equals the main results)
    examples_per_label_prompt: int = 5
    contrastive_weight: float = 1.0  # §3.2: both weights 1.0
    reconstruction_weight: float = 1.0
    validation_fraction: float = 0.2  # §3.2: 80/20 split
    margin: float = 1.0
    dim: int | None = None  # transformed dimension; None = the base dimension
    learning_rate: float = 1e-3
    batch_size: int = 256
    max_epochs: int = 200
    patience: int = 10  # early stopping: epochs without a better validation loss
    identity_init: bool = True  # start from the generic space when dim equals the base dimension
    seed: int = 42


def transform_slug(instruction: str) -> str:
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------- model
def _module(d_in: int, d_out: int, identity: bool) -> torch.nn.Module:
    import torch

    class LinearEncoderDecoder(torch.nn.Module):
        """Single linear layer each way (§3.2): z = enc(x), x_hat = dec(z)."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = torch.nn.Linear(d_in, d_out)
            self.decoder = torch.nn.Linear(d_out, d_in)
            if identity and d_in == d_out:
                with torch.no_grad():
                    for layer in (self.encoder, self.decoder):
                        layer.weight.copy_(torch.eye(d_in))
                        layer.bias.zero_()

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            z = self.encoder(x)
            return z, self.decoder(z)

    return LinearEncoderDecoder()


def contrastive_loss(z: torch.Tensor, y: torch.Tensor, margin: float) -> torch.Tensor:
    """Mean over distinct pairs of y d^2 + (1 - y) relu(margin - d)^2, d the Euclidean distance (§3.2)."""
    import torch

    n = z.shape[0]
    if n < 2:
        return z.sum() * 0
    d = torch.cdist(z, z)
    same = (y[:, None] == y[None, :]).float()
    iu = torch.triu_indices(n, n, offset=1, device=z.device)
    d, same = d[iu[0], iu[1]], same[iu[0], iu[1]]
    return (same * d.pow(2) + (1 - same) * torch.relu(margin - d).pow(2)).mean()


def fit(x: np.ndarray, y: np.ndarray, settings: TrainSettings) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Train the encoder-decoder; return its weights (numpy) and the training history."""
    import torch

    if settings.max_epochs < 1 or settings.batch_size < 2:
        raise ConfigError("GSTransform training needs max_epochs >= 1 and batch_size >= 2.")
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    order = rng.permutation(len(x))
    n_val = max(1, round(settings.validation_fraction * len(x)))
    val, train = order[:n_val], order[n_val:]
    if len(train) < 2:
        raise ConfigError(f"Only {len(x)} labelled texts; a transform needs more (raise --sample-size).")
    xt, yt = torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.int64))
    model = _module(x.shape[1], settings.dim or x.shape[1], settings.identity_init)
    opt = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)

    def loss_of(idx: np.ndarray) -> torch.Tensor:
        z, x_hat = model(xt[idx])
        lc = contrastive_loss(z, yt[idx], settings.margin)
        lr = torch.nn.functional.mse_loss(x_hat, xt[idx])
        return settings.contrastive_weight * lc + settings.reconstruction_weight * lr

    best, best_state, best_epoch, history = float("inf"), None, -1, []
    with torch.no_grad():
        initial = float(loss_of(val))
    for epoch in range(settings.max_epochs):
        model.train()
        perm = train[rng.permutation(len(train))]
        for start in range(0, len(perm), settings.batch_size):
            opt.zero_grad()
            loss = loss_of(perm[start : start + settings.batch_size])
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = float(loss_of(val))
        history.append(round(val_loss, 6))
        if val_loss < best - 1e-6:
            best, best_epoch = val_loss, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        elif epoch - best_epoch >= settings.patience:
            break
    assert best_state is not None  # max_epochs >= 1: the first epoch always sets it
    weights = {k.replace(".", "_"): v.numpy() for k, v in best_state.items()}
    info = {
        "epochs_run": len(history),
        "best_epoch": best_epoch + 1,
        "initial_val_loss": round(initial, 6),
        "best_val_loss": round(best, 6),
        "val_loss_history": history,
        "n_train": len(train),
        "n_validation": len(val),
    }
    return weights, info


# ---------------------------------------------------------------------------------------------- storage
@dataclass
class Transform:
    """One trained transform: z = W x + b."""

    path: Path
    config: dict[str, Any]
    weight: np.ndarray | None = None
    bias: np.ndarray | None = None

    @property
    def serves(self) -> list[str]:
        return list(self.config["applies_to"])

    def load(self) -> None:
        from safetensors.numpy import load_file

        tensors = load_file(self.path / WEIGHTS)
        self.weight, self.bias = tensors["encoder_weight"], tensors["encoder_bias"]

    def apply(self, x: np.ndarray) -> np.ndarray:
        if self.weight is None:
            self.load()
        weight, bias = self.weight, self.bias
        assert weight is not None and bias is not None  # `load` sets both
        return (x @ weight.T + bias).astype(np.float32)


def save_transform(
    out_dir: Path, *, weights: dict[str, np.ndarray], config: dict[str, Any], sample: LabelledSample | None
) -> Path:
    """Write one transform folder atomically file by file; config.json last, so a folder is only listed
    (it is found through its config) once its weights are complete."""
    from safetensors.numpy import save_file

    folder = Path(out_dir) / transform_slug(config["instruction"])
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}
    atomic_write(folder / WEIGHTS, lambda tmp: save_file(tensors, str(tmp), metadata={"format": "gstransform"}))
    if sample is not None:
        lines = [
            json.dumps({"text": t, "summary": s, "cluster": c, "label": lab}, ensure_ascii=False)
            for t, s, c, lab in zip(sample.texts, sample.summaries, sample.clusters, sample.labels, strict=True)
        ]
        atomic_write_text(folder / LABELS, "\n".join(lines) + "\n")
    atomic_write_json(folder / CONFIG, {**config, "weights_sha256": _sha256(folder / WEIGHTS)})
    return folder


def load_transforms(directory: str | Path) -> list[Transform]:
    """Every transform under `directory` (configs only; weights load on first use)."""
    root = Path(directory)
    if not root.is_dir():
        raise ModelLoadError(
            f"GSTransform directory {root} does not exist. Train one with `python -m bench gstransform train "
            f"--texts FILE --instruction TEXT --out {root}`."
        )
    found = []
    for cfg in sorted(root.glob(f"*/{CONFIG}")):
        config = _read_config(cfg)
        if (
            not isinstance(config, dict)
            or config.get("format") != "gstransform"
            or config.get("format_version") != FORMAT_VERSION
        ):
            raise ModelLoadError(f"{cfg} is not a GSTransform config (format version {FORMAT_VERSION}).")
        found.append(Transform(cfg.parent, config))
    if not found:
        raise ModelLoadError(f"No transform in {root} (expected {root}/<id>/{CONFIG}); train one first.")
    return found


def _read_config(cfg: Path) -> Any:
    """A transform's config.json, parsed within bounds (size, nesting, integer digits, lone surrogates: a
    folder may come from anyone), so a damaged or hostile one is one ModelLoadError naming it."""
    try:
        raw = read_at_most(cfg, MAX_SOURCE_BYTES)
    except OSError as e:
        raise ModelLoadError(f"Cannot read {cfg}: {e.strerror}.") from None
    fix = "Train the transform again (`python -m bench gstransform train`)."
    return load_json_bounded(
        raw, str(cfg), error=ModelLoadError, max_bytes=MAX_SOURCE_BYTES, unique_keys=False, fix=fix
    )


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    h.update(path.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------- training
def train_transform(
    texts: Sequence[str],
    *,
    instruction: str,
    out_dir: str | Path,
    client: LLMClient,
    base_model: str = "all-MiniLM-L6-v2",
    base_options: dict[str, Any] | None = None,
    runtime_options: dict[str, Any] | None = None,
    applies_to: Sequence[str] = (),
    settings: TrainSettings = TrainSettings(),
    source: dict[str, Any] | None = None,
) -> Path:
    """Label a sample of `texts` under `instruction` with the LLM, train, save; return the folder.

    `base_options` change the base vectors (recorded in the config, reused when applying);
    `runtime_options` (cache_dir, device, batch_size ...) do not and are not recorded.
    """
    from bench.adapters.gstransform_labels import construct_labels, prompt_records
    from bench.adapters.registry import load_model

    if not instruction.strip():
        raise ConfigError("--instruction is empty; GSTransform needs the instruction the transform serves.")
    unique = list(dict.fromkeys(t for t in texts if t and t.strip()))
    if len(unique) < 10:
        raise ConfigError(f"Only {len(unique)} distinct non-empty texts; GSTransform needs a sample of at least 10.")
    rng = np.random.default_rng(settings.seed)
    pick = sorted(rng.choice(len(unique), size=min(settings.sample_size, len(unique)), replace=False).tolist())
    sample_texts = [unique[i] for i in pick]

    base = load_model(base_model, **(base_options or {}), **(runtime_options or {}))
    sample = construct_labels(
        sample_texts,
        instruction=instruction,
        embed=lambda xs: _generic(base, xs),
        client=client,
        n_clusters=settings.n_clusters,
        examples=settings.examples_per_label_prompt,
        seed=settings.seed,
    )
    keep = sample.labelled
    x = _generic(base, [sample.texts[i] for i in keep])
    label_ids = {lab: k for k, lab in enumerate(sample.taxonomy)}
    y = np.array([label_ids[lab] for lab in sample.labels if lab is not None])  # the labels of `keep`
    weights, history = fit(x, y, settings)
    config = {
        "format": "gstransform",
        "format_version": FORMAT_VERSION,
        "instruction": instruction,
        "applies_to": list(dict.fromkeys([instruction, *applies_to])),
        "base_model": base_model,
        "base_options": base_options or {},
        "base_fingerprint": base.fingerprint,
        "dim_in": int(x.shape[1]),
        "dim_out": int(weights["encoder_weight"].shape[0]),
        "settings": asdict(settings),
        "sample": {
            "texts_available": len(unique),
            "sampled": len(sample_texts),
            "labelled": len(keep),
            "sampled_texts_sha256": hashlib.sha256("\n".join(sample_texts).encode()).hexdigest(),
            "source": source or {},
        },
        "taxonomy": sample.taxonomy,
        "label_counts": {lab: int((y == k).sum()) for lab, k in label_ids.items()},
        "failures": sample.failures,
        "training": history,
        "llm": {**client.config.record(), "json_mode_used": client.json_mode, "tokens": sample.usage},
        "prompts": prompt_records(),
    }
    return save_transform(Path(out_dir), weights=weights, config=config, sample=sample)


def _generic(base: BaseEncoder, texts: list[str]) -> np.ndarray:
    """Generic (instruction-free) vectors of the base encoder, through its embedding cache."""
    return base.encode_inputs([base.render(t, None, None) for t in texts], show=False)


# ---------------------------------------------------------------------------------------------- encoder
class GSTransformEncoder(BaseEncoder):
    """A base encoder's instruction-free vectors, mapped by the transform trained for each row's instruction.

    Spec: `gstransform:TRANSFORM_DIR` (see module docstring). Options: `base_model` (default: the one the
    transforms were trained on; must match their recorded vector fingerprint) and the usual runtime options
    (batch_size, device, cache_dir ...), which also go to the base encoder.
    """

    family = "gstransform"
    distributes = False  # a linear map per row: a launched run shares the base encoder's work instead
    notes = (
        "spec gstransform:TRANSFORM_DIR (from `bench gstransform train`); "
        "base_model: generic encoder spec (default: the one the transforms were trained on)"
    )

    def __init__(
        self,
        transform_dir: str,
        *,
        base_model: str | None = None,
        name: str | None = None,
        revision: str | None = None,
        **kwargs: Any,
    ) -> None:
        """The transforms in `transform_dir` over their base encoder (see the class docstring).

        Args:
            revision: only the revision results are filed under (default `gst-` and a hash of the transforms'
                weights and instructions); the base encoder keeps its own.
            max_tokens: passed to the base encoder (its per-batch token budget); the transforms need none.
        """
        self.transform_dir = Path(transform_dir)
        self.transforms = load_transforms(self.transform_dir)
        recorded = {t.config["base_model"] for t in self.transforms}
        if base_model is None and len(recorded) > 1:
            raise ConfigError(
                f"Transforms in {transform_dir} were trained on different base models: {sorted(recorded)}."
            )
        self.base_model = base_model or next(iter(recorded))
        self._by_instruction: dict[str, Transform] = {}
        for t in self.transforms:
            for inst in t.serves:
                self._by_instruction.setdefault(inst, t)
        shared = ("batch_size", "max_tokens", "device", "dtype", "cache_dir", "use_cache", "show_progress_bar")
        base_kwargs = {k: kwargs[k] for k in shared if kwargs.get(k) is not None}
        from bench.adapters.registry import load_model

        self.base = load_model(self.base_model, **{**self.transforms[0].config.get("base_options", {}), **base_kwargs})
        for t in self.transforms:
            if t.config["base_fingerprint"] != self.base.fingerprint:
                raise ConfigError(
                    f"Transform {t.path.name} was trained on vectors {t.config['base_fingerprint']}, but the base "
                    f"encoder gives {self.base.fingerprint}; retrain it or pass the matching base_model"
                    f"{_dtype_hint(t.config['base_fingerprint'], self.base.fingerprint)}."
                )
        label = name or self.transform_dir.resolve().name
        super().__init__(
            name=label if label.startswith("gstransform/") else f"gstransform/{label}",
            revision=revision or self._revision(),
            **kwargs,
        )

    def _revision(self) -> str:
        h = hashlib.sha256()
        for t in self.transforms:
            h.update(t.config["weights_sha256"].encode())
            h.update(json.dumps(t.serves).encode())
        return f"gst-{h.hexdigest()[:12]}"

    def settings(self) -> JSONObject:
        return {
            **super().settings(),
            "base_model": self.base_model,
            "transforms": {t.path.name: [*t.serves] for t in self.transforms},
        }

    def identity_extras(self) -> JSONObject:
        return {"base": self.base.fingerprint}

    def content_id(self) -> str:
        return f"gstransform:{self._revision()}"  # the transforms' weights, whatever --model-revision says

    def sub_encoders(self) -> list[BaseEncoder]:
        return [self.base]

    def _load(self) -> None:
        for t in self.transforms:
            t.load()

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> list[str]:
        return [instruction or "", text]

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        groups: dict[str, list[int]] = {}
        for i, model_input in enumerate(inputs):  # [instruction, text]
            groups.setdefault(model_input[0], []).append(i)
        out: np.ndarray | None = None
        for instruction, rows in groups.items():
            transform = self._by_instruction.get(instruction)
            if transform is None:
                known = "; ".join(repr(k) for k in self._by_instruction) or "none"
                raise ConfigError(
                    f"No GSTransform in {self.transform_dir} serves the instruction {instruction!r} (it serves: "
                    f"{known}). Train one: python -m bench gstransform train --instruction {instruction!r} "
                    f"--texts FILE --out {self.transform_dir}  (or add it with --applies-to)."
                )
            z = transform.apply(_generic(self.base, [inputs[i][1] for i in rows]))
            if out is None:
                out = np.empty((len(inputs), z.shape[1]), dtype=np.float32)
            out[rows] = z
        assert out is not None
        return out


def _dtype_hint(trained: Mapping[str, object], now: Mapping[str, object]) -> str:
    """The one fix when only the dtype differs (a transform trained on CPU, used on a GPU, where `auto` is bf16)."""
    differ = {k for k in trained.keys() | now.keys() if trained.get(k) != now.get(k)}
    if differ == {"dtype"} and trained.get("dtype"):
        return f" (only the dtype differs: add --dtype {trained['dtype']})"
    return ""

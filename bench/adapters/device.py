"""Where an encoder's weights run and in which dtype: what `--device` and `--dtype` resolve to.

`auto` picks the device (CUDA, then Apple MPS, then CPU; in a launched run this rank's own GPU) and the dtype
(bfloat16 on a GPU that has it, float16 on other GPUs, float32 on a CPU). A device the machine lacks is a
`ConfigError` before anything loads, not a model error. Both are asked only when needed: a float32 setting
never imports torch to learn which device it is on.

`Placement` is the part of the encoder that holds the two options (`device_option`, `dtype_option`) and answers
`device`, `dtype` and `precision` (the part of the dtype that changes vectors, for the cache key and the
experiment).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.adapters import distributed
from bench.core.errors import ConfigError

if TYPE_CHECKING:
    from bench.core.json_types import JSONObject

DTYPES = ("float32", "float16", "bfloat16", "auto")


def resolve_device(device: str | None) -> str:
    """'auto'/None picks CUDA, then Apple MPS, then CPU; a device that is not there is a ConfigError.
    In a launched run (torchrun), auto and "cuda" mean this rank's own GPU, `cuda:LOCAL_RANK`."""
    if device in (None, "auto", "cuda") and (own := distributed.local_device()) is not None:
        return own
    if device not in (None, "auto"):
        check_device(device)
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def check_device(device: str) -> None:
    """Fail before loading when `--device` names an accelerator this machine lacks (not a model error)."""
    import torch

    kind, _, index = device.partition(":")
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (index.isdigit() and int(index) >= count):
            raise ConfigError(
                f"--device {device}: this machine has {count} CUDA device(s) visible to torch "
                f"{torch.__version__}. Use --device cpu (or auto), or install a CUDA build of torch."
            )
    elif kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ConfigError(f"--device {device}: Apple MPS is not available here. Use --device cpu (or auto).")


def check_dtype(dtype: str) -> None:
    if dtype not in DTYPES:
        raise ConfigError(f"Unknown dtype '{dtype}'; choose one of {', '.join(DTYPES)}.")


def resolve_dtype(dtype: str, device: str) -> str:
    """'auto' is bfloat16 on a GPU that supports it, float16 on other GPUs, float32 on CPU."""
    check_dtype(dtype)
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float32"


class Placement:
    """The device and dtype part of an encoder: the options as given, and what they resolve to here."""

    device_option: str | None
    dtype_option: str

    @property
    def device(self) -> str:
        return resolve_device(self.device_option)

    @property
    def dtype(self) -> str:
        """The dtype the weights run in; only `auto` asks which device this is (importing torch)."""
        return self.dtype_option if self.dtype_option != "auto" else resolve_dtype("auto", self.device)

    def precision(self) -> JSONObject:
        """The dtype the weights really run in, and for half precision the device kind: both change vectors.

        `--dtype auto` is bfloat16 on one GPU, float16 on another and float32 on a CPU, so the literal
        `auto` never names a setting. Half-precision kernels differ between CPUs and GPUs (a bf16 matmul
        on a CPU is not a GPU's), so bf16/fp16 vectors also carry the device kind; float32 ones agree
        across devices to float rounding and do not.
        """
        dtype = self.dtype
        if dtype == "float32" or (device := self.device) == "api":  # float32 asks for no device (no torch import)
            return {"dtype": dtype}
        return {"dtype": dtype, "device_kind": device.split(":")[0]}

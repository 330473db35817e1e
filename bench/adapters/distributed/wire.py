"""Messages between rank 0 and one other rank: an int64 header, then a tensor payload (vectors, or a pickle
with its out-of-band buffers). Vectors travel in bfloat16 or float16 when every value survives the round
trip exactly (`compact`), else float32."""

from __future__ import annotations

import pickle
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy and torch load with the model, not with `bench --help`
    import numpy as np
    import torch

_HEADER = 10  # int64s: kind, job id, rows, dim, dtype code, pickle parts, encode µs, score µs, committed, flags
JOB, VECTORS, OBJECT, FAILURE, HEARTBEAT, STOP = range(1, 7)
_DTYPES = ("float32", "bfloat16", "float16")


@dataclass
class Message:
    kind: int
    job_id: int = 0
    obj: Any = None  # whatever a peer pickled: a job's payload, a call's result
    vectors: Any = None  # an (n, dim) array in a VECTORS message
    encode_s: float = 0.0
    score_s: float = 0.0
    committed: int = 0  # the sender's shard has committed every batch of a job id up to this one
    in_shard: bool = False  # these vectors are in the sender's shard, or will be once `committed` says so
    error: BaseException | None = None  # the payload could not be unpickled here (or was never sent)


class Unsendable(Exception):
    """A message could not be made (pickling its object failed): nothing was sent; `__cause__` says why."""


class Wire:
    """Messages to and from one peer: an int64 header, then a tensor payload (vectors, or pickled bytes).
    Sends hold a lock, so a heartbeat never lands between another message's header and payload."""

    def __init__(self, peer: int) -> None:
        self.peer = peer
        self.lock = threading.Lock()

    def send(
        self,
        kind: int,
        job_id: int = 0,
        *,
        obj: object = None,
        vectors: np.ndarray | None = None,
        usage: tuple[float, float] = (0.0, 0.0),
        committed: int = 0,
        in_shard: bool = False,
    ) -> None:
        """Send one message; `Unsendable` (nothing sent) when its vectors or object cannot be made into bytes."""
        import torch
        import torch.distributed as dist

        header = torch.zeros(_HEADER, dtype=torch.int64)
        header[0], header[1] = kind, job_id
        header[6], header[7] = round(usage[0] * 1e6), round(usage[1] * 1e6)
        header[8], header[9] = committed, int(in_shard)
        payload = None
        parts: list[torch.Tensor] = []
        try:
            if vectors is not None:
                payload = compact(torch.from_numpy(vectors))
                header[2], header[3] = payload.shape[0], payload.shape[1]
                header[4] = _DTYPES.index(str(payload.dtype)[6:])
            if obj is not None:  # pickled, with arrays out of band: a view's vectors go as they lie, uncopied
                parts = _pickled(obj)
                header[5] = len(parts)
        except Exception as e:
            raise Unsendable(f"{type(e).__name__}: {e}") from e
        with self.lock:
            dist.send(header, self.peer)
            if payload is not None and payload.numel():
                dist.send(payload.contiguous(), self.peer)
            if parts:
                dist.send(torch.tensor([p.numel() for p in parts], dtype=torch.int64), self.peer)
                for part in parts:
                    if part.numel():
                        dist.send(part, self.peer)

    def recv(self, timeout_s: float) -> Message:
        """The next message; RuntimeError when the peer is gone or silent for `timeout_s`."""
        import torch
        import torch.distributed as dist

        limit = timedelta(seconds=timeout_s)

        def receive(tensor: torch.Tensor) -> None:
            work = dist.irecv(tensor, src=self.peer)
            assert work is not None  # None only on a rank outside the group, and the default group holds them all
            work.wait(limit)

        header = torch.empty(_HEADER, dtype=torch.int64)
        receive(header)
        kind, job_id, rows, dim, code, nbytes, enc_us, score_us, committed, flags = (int(v) for v in header)
        message = Message(kind, job_id, encode_s=enc_us / 1e6, score_s=score_us / 1e6, committed=committed)
        message.in_shard = bool(flags & 1)
        if kind == VECTORS:
            tensor = torch.empty((rows, dim), dtype=getattr(torch, _DTYPES[code]))
            if tensor.numel():
                receive(tensor)
            message.vectors = tensor.float().numpy()
        elif nbytes:  # parts of a pickle: the stream, then its out-of-band buffers
            sizes = torch.empty(nbytes, dtype=torch.int64)
            receive(sizes)
            parts = [torch.empty(int(n), dtype=torch.uint8) for n in sizes]
            for part in parts:
                if part.numel():
                    receive(part)
            try:  # from a rank of this run, running this code; what fails here fails that job, not the link
                message.obj = pickle.loads(parts[0].numpy().tobytes(), buffers=[p.numpy() for p in parts[1:]])
            except Exception as e:  # noqa: BLE001 - e.g. a class this process cannot import
                message.error = e
        return message


def _pickled(obj: object) -> list[torch.Tensor]:
    """`obj` as uint8 tensors: the pickle stream, then each out-of-band buffer (protocol 5), zero-copy."""
    import warnings

    import torch

    buffers: list[pickle.PickleBuffer] = []
    stream = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    with warnings.catch_warnings():  # a read-only buffer is only read (sent)
        warnings.simplefilter("ignore", UserWarning)
        return [
            torch.frombuffer(bytearray(stream), dtype=torch.uint8),
            *(
                torch.frombuffer(b.raw(), dtype=torch.uint8) if b.raw().nbytes else torch.empty(0, dtype=torch.uint8)
                for b in buffers
            ),
        ]


def compact(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` as bfloat16 or float16 if that holds every value exactly (a model run in half precision),
    else as it is: the receiver's float32 copy is then bit-identical, at half the bytes."""
    import torch

    if tensor.dtype != torch.float32 or tensor.numel() == 0:
        return tensor
    for half in (torch.bfloat16, torch.float16):
        narrow = tensor.to(half)
        if torch.equal(narrow.float(), tensor):
            return narrow
    return tensor

"""Data-parallel encoding over torch.distributed ranks (`torchrun` / `accelerate launch`): a pipeline, not rounds.

The lm-evaluation-harness convention: every rank runs the same command and loads the same model; rank 0
alone runs the evaluation, scores, writes results and prints. The split happens below MTEB, inside the
encoder, where the harness already knows which inputs the cache lacks. What keeps every rank busy:

* **A queue of batches, pulled ahead.** When an encoder must embed inputs the cache lacks, rank 0 sorts
  them longest first and cuts them into exactly the batches a one-process run forms (`plan_jobs`), and
  queues them. Rank 0 encodes from the front of the queue itself; a sender thread per other rank keeps
  `DEPTH` batches in that rank's hands, so a rank goes from one batch to the next without a round trip,
  never waits for another rank, for rank 0's checks or for the cache, and a slow rank simply takes
  fewer batches. Every batch is the one a single process would form, so vectors equal its vectors.
* **Vectors travel as tensors** (point-to-point send/recv), in bfloat16 or float16 when every value
  survives the round trip exactly (a model run in bf16: half the bytes, the same numbers), else float32.
* **Each rank checks and commits what it encodes.** A rank checks its batch (NaN/inf) and hands it to the
  writer thread of its own shard of the cache (`<cache>.shards/rank<R>.sqlite`, `bench.adapters.cache`)
  before sending it; rank 0 only receives (the task's scoring needs every vector) and commits its own
  batches to the main file. Rank 0 reads main + shards as one cache. Until a rank's messages say its shard
  has committed a batch (`committed`, in every message), rank 0 holds that batch's vectors in memory
  (`EmbeddingCache.hold`): lookups see them, and if that rank fails, rank 0 commits them to the main file
  before it reports the failure, so everything that arrived is in the cache. Ranks on another machine than
  rank 0 (no shared disk assumed) send their batches uncommitted, and rank 0 commits them as before.
* **Scoring off the critical path.** A task's scoring jobs (`bench.core.parallel`) go to the other
  ranks' scoring threads, which run beside their encoding (`Team.submit`).
* **Failures end the run with one error line**, not a 24-hour wait: every rank hears from rank 0, and
  rank 0 from every rank, at least every `HEARTBEAT_S / 10` seconds; a rank silent for `HEARTBEAT_S`
  (`INSTRUCT_BENCH_HEARTBEAT_S`, default 300) is hung. A rank that dies closes its connection, and
  torchrun then SIGTERMs the rest: rank 0 turns either into an `EncodingError` naming the rank and
  saying that a rerun resumes from the cache. A rank's own exception travels to rank 0 as itself: a job
  that cannot be pickled, unpickled or run fails that job (raised where the task waits for it), and an
  exception that ends a rank (its model load, its loop) is sent to rank 0 before the rank exits.

Families that are cheap or remote opt out with `distributes = False` (the API family, which gets
concurrent requests instead; GSTransform, whose base encoder is what is distributed, as a `sub_encoders()`
job). No two processes of a run write one SQLite file (rank 0 the main file, rank R its shard), and no
shared filesystem is needed. The process group is gloo even on GPUs: vectors are on the CPU after the forward
pass anyway (they go to the cache), so NCCL would add device pinning and nothing else.

The modules, by what they hold: `world` (which rank this is, the heartbeat bound), `planning` (what a team
needs of an encoder, the batches as jobs), `wire` (messages and how vectors travel), `faults` (how a
failure crosses ranks), `team` (rank 0: the queue, the threads per rank, the cache hand-off `Landing`),
`link` (another rank's threads) and `session` (joining the group, the run's state, `serve`). This package
re-exports what the encoder, the runner and the command line use.
"""

from bench.adapters.distributed.faults import failure_error, failure_of
from bench.adapters.distributed.planning import Encoder, all_encoders, encoder_key, plan_jobs
from bench.adapters.distributed.session import coordinator_for, current_world, local_device, serve, session, usage
from bench.adapters.distributed.team import BACKLOG, DEPTH, Landing, Team
from bench.adapters.distributed.wire import Message, Unsendable, Wire, compact
from bench.adapters.distributed.world import (
    DEFAULT_HEARTBEAT_S,
    DEFAULT_TIMEOUT_S,
    HEARTBEAT_ENV,
    TIMEOUT_ENV,
    World,
    heartbeat_s,
    is_worker,
    world_from_env,
)

__all__ = [
    "BACKLOG",
    "DEFAULT_HEARTBEAT_S",
    "DEFAULT_TIMEOUT_S",
    "DEPTH",
    "HEARTBEAT_ENV",
    "TIMEOUT_ENV",
    "Encoder",
    "Landing",
    "Message",
    "Team",
    "Unsendable",
    "Wire",
    "World",
    "all_encoders",
    "compact",
    "coordinator_for",
    "current_world",
    "encoder_key",
    "failure_error",
    "failure_of",
    "heartbeat_s",
    "is_worker",
    "local_device",
    "plan_jobs",
    "serve",
    "session",
    "usage",
    "world_from_env",
]

"""instruct-bench: evaluate instruction-following text embeddings on MTEB tasks.

    from bench import RunOptions, run
    outcomes = run(RunOptions(model="all-MiniLM-L6-v2", suite="demo"))
"""

from bench.runner import RunOptions, TaskOutcome, run

__version__ = "0.1.0"
__all__ = ["RunOptions", "TaskOutcome", "__version__", "run"]

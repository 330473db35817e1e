"""Reading and summarising results: the result store, run outcomes, summary tables, instruction
sensitivity, the task catalogue (with each task's facts, `task_facts.py`), the cached facts of MTEB's model
registry (`model_catalog.py`) and the leaderboard's suite averages.

Both the command line and the leaderboard read results through this layer; it never runs a model.
"""

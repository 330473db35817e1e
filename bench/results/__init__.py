"""Reading and summarising results: the result store, run outcomes, summary tables, instruction
sensitivity, the task catalogue and the leaderboard's suite averages.

Both the command line and the leaderboard read results through this layer; it never runs a model.
"""

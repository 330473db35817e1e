"""The ground floor every other package stands on: errors, files, redaction, progress, config and
variants files, bounded reading, package versions and the LLM client.

It imports nothing of `bench`'s other layers, `bench/tasks/` or `bench/adapters/` (.importlinter), so a task or a
model family can use it without pulling in the run or the command line.
"""

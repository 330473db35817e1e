"""The command line (`bench`, `python -m bench`): parsing, one module per command, printing.
It only wires the layers below it (bench/cli/main.py)."""

"""Static leaderboard with validated submissions (`bench submit`, `bench leaderboard build`).

submission.py   reading a submission (zip, packed folder, plain results folder); packing one
schema.py       JSON Schemas of result files, run records and manifests (schemas/*.json)
reference.py    what the harness says about each task (versions, revisions, hashes, metric ranges)
limits.py       bounds on hostile input (archive size, member count and size, names, links, JSON depth)
names.py        look-alike model names: NFKC, Unicode confusables (UTS #39 skeleton), mixed scripts
scripts.py      the scripts of a name's words (UTS #39 highly restrictive, Script_Extensions from `regex`)
validate.py     every check, and every reason a submission is rejected (REASONS)
entries.py      what validation accepts: a result (Entry) under its row (ModelKey), the verdict (Report)
trust.py        across submissions: re-runs merge, a verified result outranks, conflicts are held back
rerun.py        when two submitted results are one result (a re-run: merged) and where they differ
verify.py       `bench leaderboard verify`: re-run a submission; which results the site calls verified
facts.py        model facts (size, licence, dates, links) checked once for every row, from any source
external.py     rows not computed here (a paper's reported numbers, MTEB's published ones) on the board
mteb_published.py  `--mteb-results`: MTEB's results repository read, within bounds, as external rows
table.py        accepted results as one JSON-ready dict (leaderboard.json), assembled from:
rows.py           model rows (facts, baselines, verification) as leaderboard.json gives them
suite_tables.py   one table per suite: ×100 scores, averages, ranks (bench/results/comparability.py), best
same_scores.py    rows with the same scores, flagged
sensitivity_table.py  results under instruction variants, per task
exports.py      leaderboard.json and leaderboard.csv, whose columns are one spec (`COLUMNS`)
suites.py       the papers' column names and averages per suite
plots.py        inline SVG: V-measure per instruction (InBedder Fig. 4), score against size, per-aspect bars
site.py         the build: validate, then render templates/ with static/ into a folder
"""

from bench.leaderboard.site import build, validate_all
from bench.leaderboard.validate import REASONS

__all__ = ["REASONS", "build", "validate_all"]

"""The shapes of leaderboard.json: its model rows, result cells, external rows, suite tables and columns.

Why one module: bench/leaderboard/table.py builds the document from rows.py, external.py, suite_tables.py
and sensitivity_table.py, and exports.py, site.py, plots.py and the Jinja templates read it back; a key
named here is one that every one of them may rely on, and mypy checks each writer and reader against it.
The classes describe the document as it is written; they do not change it (key order is the writers').

Keys named by a mark (`baseline`, `local_copy`, `stand_in`, `subset`, `unregistered`) are the marks' own
keys (`bench.results.marks`: `Mark.key`); tests/leaderboard/test_row_types.py holds the two in step.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from bench.core.json_types import JSON, JSONObject


# ------------------------------------------------------------------------------------------ model rows
class ResultDetail(TypedDict):
    """A per-criterion / per-aspect score beside a main score, ×100 (rows.py `details`)."""

    key: str  # the score's key in MTEB's scores
    label: str  # as `bench run` prints it
    value: float  # ×100


class ResultCell(TypedDict):
    """One accepted result of a model row (`models[].results[task]`)."""

    main_score_name: str  # the task's main score, as the run record names it
    main_score: float  # raw (not ×100): the mean over the test split's subsets
    scores: JSONObject  # MTEB's raw scores of the test split's first subset
    dataset_revision: str
    local_copy: bool  # computed on a local copy of the data (marks.LOCAL_COPY)
    stand_in: bool  # computed on stand-in data (marks.STAND_IN)
    stand_in_note: str | None  # the record's note on the stand-in, if any
    details: list[ResultDetail]
    file: str  # the result file inside its submission
    submission: str  # the submission shown
    seen_in: list[str]  # every submission that gave this very result (re-runs merged)
    verification: str  # "verified" or "self-reported" (bench/leaderboard/verify.py)
    record: JSONObject  # the run record, as submitted (parsed JSON)


class RecordFacts(TypedDict):
    """Facts of the model file a run recorded (rows.py `record_facts`): of a GGUF file, else None."""

    quantisation: str | None
    base_model: str | None


class ModelFacts(TypedDict):
    """What a submitted row says of its model (rows.py `ModelRow.metadata`): the site's columns and filters."""

    family: str | None  # the adapter family that ran it
    baseline: bool  # instruction-blind on every result (marks.BASELINE): never ranked
    instruction_aware: bool | None  # None: unknown
    instruction_use: JSONObject | None  # the run record's measurement (`model.instruction_use`)
    model_card: str | None  # the model card's address for a hub model
    n_parameters: int | None
    size_source: str | None  # where `n_parameters` came from
    embed_dim: int | None
    readout: str | None  # "pooling=mean, layer=-1" ...
    template: str | None  # the instruction template ("none" for a baseline)
    template_format: str | None
    spec: str | None  # the `bench run --model` spec
    dtype: str | None
    max_tokens: int | float | None
    license: str | None
    release_date: str | None  # ISO date
    memory_usage_mb: int | float | None
    quantisation: str | None  # of a GGUF file
    base_model: str | None  # of a GGUF file
    size_bucket: str | None  # bench/leaderboard/facts.py SIZE_BUCKETS label


class Reproduction(TypedDict):
    """A reported row that a submitted row's run records reproduce (external.py `reproductions`)."""

    reported_id: str  # the external row's id
    table: str | None  # the reported table's id
    label: str  # the table's label ("InBedder (Peng et al., ACL 2024), Table 1")
    url: str | None
    row: str  # the printed row's label
    mean_abs_delta: float | None  # the figure `bench reproduce` prints
    missing: list[str]
    on_stand_in: list[str]
    on_local_copy: list[str]
    cells: list[JSONObject]  # every printed cell beside ours, with Δ (`deltas.Cell`)


class ModelJson(ModelFacts):
    """A submitted model row (`models[]`): one model at one revision under one setting (rows.py `model_json`)."""

    id: str  # file-name-safe and unique: the model page is models/<id>.html
    source: str  # always "submitted"
    name: str
    revision: str
    setting: str  # the experiment's label ("" for the default setting)
    label: str  # what the site shows: name, and the setting where there is one
    submissions: list[str]  # every submission that gave one of its results
    verification: str  # "verified" when every result is, else "self-reported"
    flags: list[str]  # notes shown with the row (same scores as another row)
    same_scores_as: list[str]  # ids of rows with the very same scores (the first few)
    same_scores_count: int
    same_scores_group: str | None
    results: dict[str, ResultCell]  # task -> its accepted result
    reproduces: NotRequired[list[Reproduction]]  # added by table.py `leaderboard_data`
    open_weights: NotRequired[bool | None]  # added by table.py (bench/leaderboard/open_weights.py)


class ExternalJson(TypedDict):
    """A row a paper reported or MTEB published (`external[]`, external.py `external_json`): never verified."""

    id: str  # "<source>|<table>|<model>": never a submitted row's id
    source: str  # "reported" or "mteb"
    name: str  # the model as the source names it
    label: str
    revision: str | None
    setting: str  # always ""
    source_label: str  # the mark's words: "reported in <paper>, Table N" / "published by MTEB"
    url: str | None  # where the numbers come from
    table: str | None  # the reported table's id; None for MTEB rows
    notes: list[str]  # how the source's setting differs from the harness's task
    spec: JSONObject | None  # the `bench run` spec (and options) the harness would run it with
    family: str | None
    baseline: bool  # always False
    unregistered: bool  # an MTEB row of a model MTEB's registry does not know (marks.UNREGISTERED)
    instruction_aware: bool | None
    n_parameters: int | None
    size_source: str | None
    size_bucket: str | None
    embed_dim: int | None
    readout: None
    template: None
    max_tokens: int | float | None
    license: str | None
    release_date: str | None
    memory_usage_mb: int | float | None
    quantisation: None
    reference: str | None
    verification: None  # never verified
    flags: list[str]
    scores: dict[str, float]  # task -> main score ×100, as the source gives it
    unscored: dict[str, str]  # task -> why the source gives no score though the model has a file of it
    revisions: list[str]  # the model revisions its scores come from, most tasks first (MTEB rows)
    open_weights: NotRequired[bool | None]  # added by table.py: the source's own field, else None


class ExcludedJson(TypedDict):
    """A model a source has results for that the board shows no row of, with why (`excluded_models[]`,
    mteb_published.py `published`): the site lists each, so no model is missing without a word."""

    source: str  # "mteb"
    model: str
    reason: str


# ---------------------------------------------------------------------------------------- suite tables
class PartialAverage(TypedDict):
    """An average over only some of its tasks, printed "47.89 (5 of 9)" (`partial[label]`)."""

    value: float  # ×100
    present: int  # tasks the row has
    of: int  # tasks the average covers


class PrintedAverageJson(TypedDict):
    """A paper's own average as it prints it (external.py `as_printed`)."""

    printed: float
    recomputed: float | None  # the mean of the same printed cells where it differs beyond print precision


# A published cell not comparable with the harness's own runs of its task (mteb_published.py `cell_marks`):
# scored with an older MTEB's main score, or on another (or an unrecorded) dataset revision.
CellMark = Literal["older_metric", "older_revision"]
ZeroShot = Literal["yes", "no", "unknown"]  # zero_shot.py: trained on none of the suite's tasks, some, unknown


class CellMarkJson(TypedDict):
    """One mark of a suite-table cell (`cell_marks[task][]`): its key, symbol, words and why."""

    key: CellMark
    symbol: str  # ᴹ, ᴿ
    label: str
    note: str


class PublishedCells(TypedDict):
    """What a suite row says of its cells beyond their values (external.py `published_cells`)."""

    cell_marks: dict[str, list[CellMarkJson]]  # task -> its marks; only marked tasks
    unscored: dict[str, str]  # task -> why the source gives no score for it
    comparable_with_runs: bool  # no marked cell: the "comparable with harness runs only" switch keeps it
    revisions: list[str]  # the revision folders the row's scores come from ([] for a submitted row)


class SuiteRow(TypedDict):
    """A row of a suite table (`suites[].rows[]`), submitted or external (suite_tables.py `_table_row`)."""

    model_id: str  # a `models[]` or `external[]` id
    source: str  # "submitted", "reported" or "mteb"
    scores: dict[str, float | None]  # task -> main score ×100, None where missing
    averages: dict[str, float | None]  # average label -> its complete value, None otherwise
    average: float | None  # the ranking average's complete value
    printed_averages: dict[str, PrintedAverageJson]  # a paper's own averages (empty for other rows)
    type_means: dict[str, float | None]  # MTEB task type -> mean ×100 (None unless every task is there)
    baseline: bool  # marks.BASELINE: never ranked, never shaded best
    rank: int | None  # by the ranking average, under comparability.RULE; None: unranked
    unranked_reason: str | None  # why the row has no rank; None when ranked
    borda_rank: int | None
    borda: float | None  # Borda points over the task columns
    local_copy: list[str]  # tasks computed on a local copy (marks.LOCAL_COPY)
    stand_in: list[str]  # tasks computed on stand-in data (marks.STAND_IN)
    subset: list[str]  # tasks of a limited run (marks.SUBSET)
    verification: str | None  # None for an external row
    flags: list[str]
    metric_versions: dict[str, str]  # task -> the metric version its run record names
    coverage: str  # "n of N": the suite's tasks the row has a score of, MTEB's way
    partial: NotRequired[dict[str, PartialAverage]]  # average label -> partial value: set once the table is built
    # set by suite_tables.py for every row: external.py `published_cells` and zero_shot.py `zero_shot`
    cell_marks: NotRequired[dict[str, list[CellMarkJson]]]
    unscored: NotRequired[dict[str, str]]
    comparable_with_runs: NotRequired[bool]
    revisions: NotRequired[list[str]]
    zero_shot: NotRequired[ZeroShot]
    zero_shot_pct: NotRequired[int | None]  # MTEB's percentage; None when unknown
    trained_on: NotRequired[list[str]]  # the suite's tasks the model was trained on
    # bench/leaderboard/intervals.py, set once the table is ranked: 95% bootstrap intervals ×100 ([low, high])
    intervals: NotRequired[dict[str, list[float]]]  # task -> its score's interval, where its record kept items
    interval: NotRequired[list[float] | None]  # the ranking average's interval
    interval_note: NotRequired[str | None]  # why `interval` is None
    band: NotRequired[int | None]  # the rank of the first row of its tied band; None: unranked
    tied: NotRequired[bool]  # shares its band with another row


class PaperLink(TypedDict):
    """A paper a suite follows (`suites[].papers[]`)."""

    label: str
    url: str


class MetricJson(TypedDict):
    """How a main score is computed, with the columns that use it (`suites[].metrics[]`)."""

    main_score: str
    columns: list[str]  # column headers
    note: str


class AverageJson(TypedDict):
    """An average column of a suite table (`suites[].averages[]`)."""

    label: str
    note: str
    tasks: list[str] | None  # None: every task column
    covers: list[str]  # the column headers it averages


class TaskTypeJson(TypedDict):
    """An MTEB task type of a suite with two or more (`suites[].task_types[]`)."""

    type: str  # MTEB's name ("Retrieval")
    label: str  # the short header ("Retr.")
    tasks: list[str]
    columns: list[str]  # their column headers


class DatasetPage(TypedDict):
    """A task's dataset on the hub."""

    path: str  # the hub id
    url: str


class Column(TypedDict):
    """A task column of a suite table (`suites[].columns[]`)."""

    task: str
    label: str  # the header (the paper's abbreviation, else the task name)
    main_score: str  # "" when the harness has no reference for the task
    type: str  # MTEB task type, "" when unknown
    dataset: DatasetPage | None  # None for packaged demo data


class SuiteSource(TypedDict):
    """A reported table or published results feeding a suite table (external.py `suite_sources`)."""

    source: str
    table: str | None
    url: str | None
    label: str
    rows: int  # how many of the table's rows it gives
    notes: list[str]


class ShiftGainPoint(TypedDict):
    """A setting on the suite's shift-vs-gain plot (bench/leaderboard/shift_gain.py)."""

    model_id: str
    label: str
    blind_id: str  # the ∅ row (`--template none`) the gain is taken against
    shift: float  # mean cosine distance over `tasks`
    tasks: int  # the suite's tasks with a recorded shift
    gain: float  # ×100: the row's ranking average minus the ∅ row's


class ShiftGain(TypedDict):
    """A suite's shift-vs-gain plot data (`suites[].shift_gain`)."""

    points: list[ShiftGainPoint]
    split: float | None  # the median shift: the plot's vertical quadrant line
    unpaired: list[str]  # labels of rows with a shift but no ∅ row on the table


class SuiteTable(TypedDict):
    """One suite's table (`suites[]`, suite_tables.py `suite_tables`)."""

    name: str
    description: str
    measures: str  # what the suite measures
    papers: list[PaperLink]
    metrics: list[MetricJson]
    source: str  # the paper table or figure the columns follow
    averages: list[AverageJson]
    average_label: str  # the ranking average
    rank_rule: str | None  # comparability.RULE when some row is ranked or says why not
    task_types: list[TaskTypeJson]
    columns: list[Column]
    missing: list[str]  # headers of the suite's columns no row fills
    rows: list[SuiteRow]
    best: dict[str, float]  # task -> the highest comparable score (shaded on the site)
    sources: NotRequired[list[SuiteSource]]  # added by table.py `leaderboard_data`
    shift_gain: NotRequired[ShiftGain]  # added by table.py (bench/leaderboard/shift_gain.py)


# ----------------------------------------------------------------------------- instruction sensitivity
class VariantJson(TypedDict):
    """A result under one instruction variant (`sensitivity[].models[].variants[]`)."""

    label: str
    set: str | None  # the variant set
    index: JSON  # the record's `variant.index`
    instruction: str
    score: float  # ×100
    file: str
    submission: str
    verification: str


class SensitivityModel(TypedDict):
    """One model's variants of one task (`sensitivity[].models[]`), scores ×100."""

    name: str
    revision: str
    setting: str
    label: str
    model_id: str | None  # its model row, where the leaderboard has one
    baseline: bool
    default: float | None  # the score under the task's own instructions
    mean: float
    std: float | None  # None for one variant
    min: float
    max: float
    n: int
    set_means: dict[str, float]
    set_differences: dict[str, float]
    verification: str
    variants: list[VariantJson]


class SensitivityTask(TypedDict):
    """A task with variant results (`sensitivity[]`, sensitivity_table.py `sensitivity_data`)."""

    task: str
    main_score_name: str | None  # the task's main score, as its results name it
    models: list[SensitivityModel]  # best mean first
    set_differences: NotRequired[list[str]]  # every model's set-difference keys, in order
    stability: NotRequired[JSONObject | None]  # `rank_stability` with model labels; None with one model


# ------------------------------------------------------------------------------------------- the rest
class MarkJson(TypedDict):
    """A mark and its words (`marks[]`, from `bench.results.marks.MARKS`)."""

    key: str
    symbol: str
    label: str
    meaning: str


class Filters(TypedDict):
    """The values present of each field the site filters models by (`filters`), in display order."""

    sources: list[str]
    families: list[str]
    sizes: list[str]
    instruction_aware: list[bool | None]
    verification: list[str]


class SourceJson(TypedDict):
    """One submitted copy of a result: where it came from, its main score and its verification."""

    submission: str
    file: str
    main_score: float
    verification: str


class RerunJson(TypedDict):
    """A result of an accepted submission that another submission also gave (`accepted[].reruns[]`)."""

    label: str
    revision: str
    task: str
    file: str
    shown: bool  # this submission's copy is the one shown
    seen_in: list[SourceJson]


class AcceptedJson(TypedDict):
    """An accepted submission (`accepted[]`)."""

    submission: str
    results: int
    merged: int
    held: int
    reruns: list[RerunJson]


class DifferenceValue(TypedDict):
    """One result's value of the first field differing results differ in."""

    submission: str
    file: str
    value: JSON  # as submitted


class Difference(TypedDict):
    """The first field differing results differ in (`conflicts[].differs_in`)."""

    field: str
    fields: int  # how many fields differ
    values: list[DifferenceValue]
    text: str


class ConflictJson(TypedDict):
    """Differing results for one (model, revision, setting, task) (`conflicts[]`)."""

    model: str
    revision: str
    setting: str
    label: str
    task: str
    decision: str
    kept: SourceJson | None
    held: list[SourceJson]
    differs_in: Difference | None


class RejectedJson(TypedDict):
    """A rejected submission and its problems (`rejected[]`)."""

    submission: str
    problems: list[JSONObject]  # `schema.Problem`'s fields, with the reason's explanation


class LeaderboardJson(TypedDict):
    """leaderboard.json: everything the site shows (table.py `leaderboard_data`)."""

    generated_at: str  # ISO time, to the second
    harness_version: str | None
    marks: list[MarkJson]
    filters: Filters
    suites: list[SuiteTable]
    models: list[ModelJson]
    external: list[ExternalJson]
    excluded_models: list[ExcludedJson]
    sensitivity: list[SensitivityTask]
    accepted: list[AcceptedJson]
    conflicts: list[ConflictJson]
    rejected: list[RejectedJson]

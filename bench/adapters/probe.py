"""Whether a setting follows instructions at all: measured, not guessed from its name.

One text is rendered under two different instructions through the setting's own input path; the same model
input both times means the vectors cannot depend on the instruction (a `--template none` run, a PromptEOL prompt
without an instruction template, `template=model` on a model without prompts). The run record keeps the
verdict; tables and the leaderboard show such a setting as an unranked baseline.

`InstructionProbe` is the encoder's part that asks: it holds nothing but the probe, and reads the family's
`render` (or `probe_input`, where a family renders a task's query some other way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.adapters.cache import input_key

if TYPE_CHECKING:
    from mteb import TaskMetadata
    from mteb.types import PromptType

    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject

PROBE_TEXT = "The hotel room was clean, but the staff at the front desk were rude."
PROBE_INSTRUCTIONS = ("What is the sentiment of this review?", "Which topic does this review discuss?")


class InstructionProbe:
    """The instruction probe of an encoder (see module docstring)."""

    if TYPE_CHECKING:  # the family's hook (bench.adapters.base.BaseEncoder.render)

        def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> ModelInput: ...

    def instruction_use(self, task_metadata: TaskMetadata | None = None) -> JSONObject:
        """Whether this setting's model input changes with the instruction: PROBE_TEXT rendered under
        the two PROBE_INSTRUCTIONS (as a task's query, `probe_input`); equal inputs mean blind."""
        first, second = (input_key(self.probe_input(PROBE_TEXT, i, task_metadata)) for i in PROBE_INSTRUCTIONS)
        return {
            "follows_instructions": first != second,
            "method": "render",
            "probe": {"text": PROBE_TEXT, "instructions": list(PROBE_INSTRUCTIONS)},
        }

    def shift_inputs(
        self,
        text: str,
        instruction: str,
        task_metadata: TaskMetadata,
        prompt_type: PromptType | None,
        *,
        from_row: bool,
    ) -> tuple[ModelInput, ModelInput]:
        """(with, without) `instruction`: the input a task gave `text` as a `prompt_type` row, and the
        instruction-blind input of the same text (bench/run/shift.py measures the distance between their
        vectors). `from_row`: the row carried `instruction` itself (else it is the task's); a family that
        renders its inputs itself needs to know which."""
        return self.render(text, instruction, prompt_type), self.render(text, None, prompt_type)

    def probe_input(self, text: str, instruction: str, task_metadata: TaskMetadata | None) -> Any:
        """The model input for `text` under `instruction`, as a task's query row renders it."""
        from mteb.types import PromptType

        return self.render(text, instruction, PromptType.query)

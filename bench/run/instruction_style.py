"""Which instruction style a run gives tasks that offer several (GSTransform appendix C).

The paper gives each baseline instructions in its own convention: command style ("Represent the
text based on ...") for InstructOR, question style for InBedder and the rest. The CLI wires model
and task, so the choice lives here: `auto` picks `command` for INSTRUCTOR-family models, judged
from the model spec's family and name, and `question` otherwise. Tasks only receive the style.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

InstructionStyle = Literal["auto", "question", "command", "gstransform"]
AUTO: Final = "auto"
STYLE_CHOICES: tuple[InstructionStyle, ...] = get_args(InstructionStyle)  # `--instruction-style` choices


def instruction_style_for(model_spec: str, requested: InstructionStyle | None) -> InstructionStyle:
    """The style to give tasks: the requested one, or for `auto`/None the model family's convention."""
    if requested and requested != AUTO:
        return requested
    from bench.adapters.registry import resolve
    from bench.core.errors import BenchError

    try:
        family, path, _ = resolve(model_spec)
    except BenchError:  # an unresolvable spec fails later, where the model loads, with its own message
        family, path = "", model_spec
    return "command" if any("instructor" in str(x).lower() for x in (family, path, model_spec)) else "question"

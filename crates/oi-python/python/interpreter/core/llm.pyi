"""``interpreter.llm``."""

from typing import Any, Dict, Optional, Union

class Llm:
    """The language model's settings."""

    model: str
    temperature: float
    api_base: Optional[str]
    api_key: Optional[str]
    api_version: Optional[str]
    context_window: Optional[int]
    max_tokens: Optional[int]
    max_budget: Optional[float]
    supports_functions: Optional[bool]
    supports_vision: Optional[bool]
    execution_instructions: Union[str, bool, None]
    max_output: int
    @property
    def spend(self) -> float: ...

    def update(self, settings: Union[Dict[str, Any], "Llm"]) -> None: ...
    def load(self) -> None: ...

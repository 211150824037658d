"""``OpenInterpreter``: Open Interpreter's synchronous Python API over oi's core."""

from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Union, overload

from .._oi import TurnError as TurnError
from .computer import Computer
from .llm import Llm

Message = Dict[str, Any]
Chunk = Dict[str, Any]
Approval = Callable[[str, str], Union[bool, str, None]]

class OpenInterpreter:
    """An interpreter: settings, a conversation, a model and a computer.

    ``OpenInterpreter(auto_run=True, verbose=True)`` takes every attribute as a keyword."""

    llm: Llm
    """The model settings (``llm.model``, ``llm.api_base``, ``llm.api_key``, …)."""
    computer: Computer
    """Runs code: ``computer.run(language, code)``, ``computer.terminate()``, ``computer.languages``."""
    approve: Optional[Approval]
    """Decides about each code block when set: ``(code, language) -> True`` (run), ``False``
    (do not run) or a string (run this code instead)."""
    messages: List[Message]
    """The conversation (LMC message dicts). Assign a list to replace it."""
    auto_run: bool
    """Run code without asking (default False)."""
    max_output: int
    """Characters of console output kept in the conversation (default 2800)."""
    loop: bool
    """Keep going with a hidden "Proceed" message until a loop breaker phrase appears."""
    loop_message: str
    loop_breakers: List[str]
    system_message: str
    """The system message."""
    custom_instructions: str
    """Appended to the system message."""
    user_message_template: str
    always_apply_user_message_template: bool
    code_output_template: str
    empty_code_output_template: str
    code_output_sender: Literal["user", "assistant"]
    offline: bool
    verbose: bool
    debug: bool
    safe_mode: Literal["off", "ask", "auto"]
    shrink_images: bool
    conversation_history: bool
    """Save the conversation after each turn (default True)."""
    conversation_history_path: Optional[str]
    conversation_filename: Optional[str]
    plain_text_display: bool
    disable_telemetry: bool
    anonymized_telemetry: bool
    max_budget: Optional[float]
    approval_policy: Literal["always-ask", "auto", "never-run"]
    """oi: how code is approved (``auto_run`` means ``auto``; ``never-run`` always wins)."""
    allow: List[str]
    """oi: commands that run without asking."""
    deny: List[str]
    """oi: text that blocks a code block wherever it appears."""
    hard_deny: bool
    """oi: block deleting home/system directories and formatting disks, even with auto_run."""
    in_terminal_interface: bool
    multi_line: bool
    contribute_conversation: bool
    speak_messages: bool
    sync_computer: bool
    highlight_active_line: bool
    os: bool

    def __init__(self, **settings: Any) -> None: ...
    @overload
    def chat(
        self,
        message: Union[str, Message, List[Message], None] = None,
        display: bool = True,
        stream: Literal[False] = False,
        blocking: bool = True,
    ) -> Optional[List[Message]]: ...
    @overload
    def chat(
        self,
        message: Union[str, Message, List[Message], None] = None,
        display: bool = True,
        *,
        stream: Literal[True],
        blocking: bool = True,
    ) -> Iterator[Chunk]: ...
    def wait(self) -> List[Message]:
        """Waits for a ``chat(blocking=False)`` turn and returns the messages it added."""
    def reset(self) -> None:
        """Ends every code session and clears the conversation."""
    def display_message(self, markdown: str) -> None: ...
    def get_oi_dir(self) -> str: ...
    def local_setup(self) -> None: ...

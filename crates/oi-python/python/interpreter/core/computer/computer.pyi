"""``interpreter.computer``."""

from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

Output = Dict[str, Any]

class Language:
    """A language oi can run."""

    name: str
    aliases: List[str]
    def __init__(self, name: str, aliases: Iterable[str]) -> None: ...

class Computer:
    """Runs code in oi's persistent language sessions."""

    languages: List[Language]
    import_computer_api: bool
    system_message: str
    ai: Any
    files: Any
    skills: Any
    terminal: Any
    os: Any
    mouse: Any
    keyboard: Any
    display: Any
    clipboard: Any
    mail: Any
    sms: Any
    calendar: Any
    contacts: Any
    browser: Any
    vision: Any
    docs: Any

    def run(
        self, language: str, code: str, stream: bool = False, display: bool = False
    ) -> Union[List[Output], Iterator[Output]]: ...
    def terminate(self) -> None: ...
    def stop(self) -> None: ...

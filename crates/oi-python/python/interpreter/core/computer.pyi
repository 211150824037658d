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

    def run(
        self, language: str, code: str, stream: bool = False, display: bool = False
    ) -> Union[List[Output], Iterator[Output]]: ...
    def terminate(self) -> None: ...
    def stop(self) -> None: ...

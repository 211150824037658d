"""``AsyncInterpreter`` and its ``Server``."""

from typing import Any, AsyncIterator, Awaitable, Coroutine, Dict, Generator, Optional, Tuple, Union

from .core import OpenInterpreter

Chunk = Dict[str, Any]
SERVER_OPTIONS: Tuple[str, ...]

class _Output(Awaitable[Chunk], AsyncIterator[Chunk]):
    def __await__(self) -> Generator[Any, None, Chunk]: ...
    def __aiter__(self) -> "_Output": ...
    async def __anext__(self) -> Chunk: ...

class AsyncInterpreter(OpenInterpreter):
    """An interpreter driven by LMC chunks, with a server."""

    server: "Server"
    print: bool
    require_acknowledge: bool
    id: Union[str, float]
    context_mode: bool

    def __init__(self, **settings: Any) -> None: ...
    async def input(self, chunk: Union[Chunk, str]) -> None:
        """Takes one user chunk (start/content/end; `stop`/`go` commands)."""
    def output(self) -> _Output:
        """The next outgoing chunk: ``await ai.output()`` or ``async for chunk in ai.output()``."""
    def respond(self, run_code: Optional[bool] = None) -> None:
        """Answers the conversation as it is (blocking), chunks to the output."""
    async def stop(self) -> None:
        """Stops the running turn."""

class Server:
    """oi's WebSocket/HTTP server for an AsyncInterpreter."""

    DEFAULT_HOST: str
    DEFAULT_PORT: int
    async_interpreter: AsyncInterpreter
    host: str
    port: int

    def __init__(self, async_interpreter: AsyncInterpreter, host: Optional[str] = None, port: Optional[int] = None) -> None: ...
    def run(
        self, host: Optional[str] = None, port: Optional[int] = None, retries: int = 5, **options: Any
    ) -> Optional[Coroutine[Any, Any, None]]:
        """Serves: blocks outside a running event loop; inside one, returns a coroutine."""
    def stop(self) -> None: ...
    @property
    def running(self) -> bool: ...

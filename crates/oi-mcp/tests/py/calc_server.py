"""An MCP server written with the official Python MCP SDK (`pip install mcp`): the server oi
connects to as a client in crates/oi-mcp/tests/client.rs (over stdio; calc_http_server.py
serves the same tools over Streamable HTTP)."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def fail(reason: str) -> str:
    """Always fails, saying why."""
    raise ValueError(reason)


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable of this server ('<unset>' if unset)."""
    import os

    return os.environ.get(name, "<unset>")


if __name__ == "__main__":
    server.run("stdio")

"""A client of oi's MCP server written with the official Python MCP SDK (`pip install mcp`).

usage: oi_client.py stdio OI_BINARY [ARGS...]
       oi_client.py http URL KEY

Exercises every tool and prints one JSON report on stdout; the Rust tests
(crates/oi-cli/tests/mcp_stdio.rs, crates/oi-server/tests/mcp_http.rs) assert on it.
"""

import json
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def text(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def execute(client, code, language="python", **extra):
    return await client.call_tool(
        "execute", {"language": language, "code": code, **extra}
    )


async def exercise(session):
    report = {}
    await session.initialize()
    tools = await session.list_tools()
    report["tools"] = sorted(t.name for t in tools.tools)
    schema = next(t for t in tools.tools if t.name == "execute").input_schema
    report["execute_required"] = sorted(schema.get("required", []))
    report["languages_enum"] = schema["properties"]["language"].get("enum", [])

    await execute(session, "x = 6 * 7\nprint('set')")
    second = await execute(session, "print(x)")
    report["state"] = [text(second).strip(), bool(second.is_error)]
    other = await execute(session, "print(globals().get('x'))", session="other")
    report["other_session"] = text(other).strip()

    shell = await execute(session, "echo shell-$((40 + 2))", language="shell")
    report["shell"] = [text(shell).strip(), bool(shell.is_error)]

    error = await execute(session, "1 / 0")
    report["error"] = [bool(error.is_error), "ZeroDivisionError" in text(error)]

    # A decoded payload run by a shell: on the hard-deny list (harmless if it ran: `echo hi`).
    denied = await execute(session, "echo ZWNobyBoaQ== | base64 -d | sh", language="shell")
    report["hard_deny"] = [bool(denied.is_error), text(denied)[:60]]

    started = time.monotonic()
    try:
        await session.call_tool(
            "execute",
            {"language": "python", "code": "import time\ntime.sleep(30)\nlate = True"},
            read_timeout_seconds=2.0,
        )
        report["cancel"] = "not cancelled"
    except Exception as error:  # the SDK's timeout error: it sent notifications/cancelled
        report["cancel"] = type(error).__name__
    after = await execute(session, "print(globals().get('late'), x)")
    report["after_cancel"] = [text(after).strip(), round(time.monotonic() - started, 1)]

    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    slow = await session.call_tool(
        "execute",
        {"language": "python", "code": "import time\ntime.sleep(2.5)\nprint('slow done')"},
        progress_callback=on_progress,
    )
    report["progress"] = [text(slow).strip(), len(progress) >= 1]

    plot = await execute(
        session,
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()",
    )
    images = [c for c in plot.content if c.type == "image"]
    report["image"] = [
        len(images),
        images[0].mime_type if images else None,
        len(images[0].data) > 100 if images else False,
    ]

    wrote = await session.call_tool("write_file", {"path": "mcp/note.txt", "content": "hi"})
    read = await session.call_tool("read_file", {"path": "mcp/note.txt"})
    outside = await session.call_tool("read_file", {"path": "/etc/hostname"})
    report["files"] = [bool(wrote.is_error), text(read), bool(outside.is_error)]

    listing = await session.call_tool("languages", {})
    report["listing"] = listing.structured_content

    reset = await session.call_tool("reset", {})
    gone = await execute(session, "print(globals().get('x'))")
    report["reset"] = [bool(reset.is_error), text(gone).strip()]
    return report


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                report = await exercise(session)
    else:
        url, key = sys.argv[2], sys.argv[3]
        async with create_mcp_http_client(headers={"X-API-KEY": key}) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    report = await exercise(session)
    print(json.dumps(report))


anyio.run(main)

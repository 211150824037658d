"""The calculator of calc_server.py served over Streamable HTTP by the official Python MCP SDK
on 127.0.0.1:PORT/mcp, answering only requests that carry the header `X-Calc-Key: KEY`
(401 otherwise): `python3 calc_http_server.py PORT KEY`."""

import os
import sys

import uvicorn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calc_server import server  # noqa: E402

port = int(sys.argv[1])
key = sys.argv[2].encode()
app = server.streamable_http_app()


async def guarded(scope, receive, send):
    if scope["type"] == "http" and dict(scope["headers"]).get(b"x-calc-key") != key:
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [(b"content-type", b"text/plain")],
            }
        )
        await send({"type": "http.response.body", "body": b"no key"})
        return
    await app(scope, receive, send)


uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")

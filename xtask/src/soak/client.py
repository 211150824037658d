"""A WebSocket client of the oi soak, written with Python's `websockets` library the way Open
Interpreter's users write theirs: the soak (in Rust) drives it with one JSON command per line
on stdin and reads one JSON event per line on stdout.

Commands: {"op": "connect", "url": U}, {"op": "send", "text": T}, {"op": "close"} (stops
reading, then the library's close: it sends a close frame and waits for the server's, up to
10 s), {"op":
"abort"} (the socket is dropped without a close handshake).
Events: {"ev": "open"}, {"ev": "open_failed", "error": E}, {"ev": "frame", "text": T},
{"ev": "closed", "code": C, "reason": R} (once per connection), {"ev": "close_done",
"ms": M}, {"ev": "abort_done"}.
"""

import asyncio
import json
import sys
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class Driver:
    def __init__(self):
        self.ws = None
        self.reader = None

    async def connect(self, url):
        try:
            # The library's defaults, as users connect (no frequent pings to keep the
            # connection busy: issue 35 found pings hid unanswered closes).
            self.ws = await connect(url, max_size=None, compression=None)
        except Exception as error:  # noqa: BLE001 - reported to the soak
            self.ws = None
            emit({"ev": "open_failed", "error": repr(error)})
            return
        emit({"ev": "open"})
        self.reader = asyncio.create_task(self.read(self.ws))

    async def read(self, ws):
        try:
            async for message in ws:
                if isinstance(message, str):
                    emit({"ev": "frame", "text": message})
        except ConnectionClosed:
            pass
        except Exception as error:  # noqa: BLE001 - reported to the soak
            emit({"ev": "error", "error": repr(error)})
        emit({"ev": "closed", "code": ws.close_code, "reason": ws.close_reason or ""})

    async def send(self, text):
        if self.ws is None:
            return
        try:
            await self.ws.send(text)
        except ConnectionClosed:
            pass

    async def finish_reader(self):
        if self.reader is not None:
            await self.reader
        self.reader = None
        self.ws = None

    async def close(self):
        # As a user's script closes: it stops reading (frames on their way stay unread in
        # the library's queue, which stops reading the socket past 16 frames) and closes at
        # once, with no ping or pause first.
        ws = self.ws
        if self.reader is not None:
            self.reader.cancel()
            try:
                await self.reader
            except asyncio.CancelledError:
                pass
            self.reader = None
        started = time.monotonic()
        if ws is not None:
            await ws.close()
        ms = (time.monotonic() - started) * 1000
        if ws is not None:
            emit({"ev": "closed", "code": ws.close_code, "reason": ws.close_reason or ""})
        self.ws = None
        emit({"ev": "close_done", "ms": ms})

    async def abort(self):
        if self.ws is not None:
            self.ws.transport.abort()
        await self.finish_reader()
        emit({"ev": "abort_done"})


async def main():
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    driver = Driver()
    while True:
        line = await stdin.readline()
        if not line:
            break
        command = json.loads(line)
        op = command["op"]
        if op == "connect":
            await driver.connect(command["url"])
        elif op == "send":
            await driver.send(command["text"])
        elif op == "close":
            await driver.close()
        elif op == "abort":
            await driver.abort()


asyncio.run(main())

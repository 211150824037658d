import websockets
import json
import asyncio

async def websocket_interaction():
    async with websockets.connect("ws://localhost:8000/") as websocket:
        # Send a multi-part user message
        await websocket.send(json.dumps({"role": "user", "start": True}))
        await websocket.send(json.dumps({"role": "user", "type": "message", "content": "Analyze this image:"}))
        await websocket.send(json.dumps({"role": "user", "type": "image", "format": "path", "content": "path/to/image.jpg"}))
        await websocket.send(json.dumps({"role": "user", "end": True}))

        # Receive and process messages
        while True:
            message = await websocket.recv()
            data = json.loads(message)
            
            if data.get("type") == "message":
                print(f"Assistant: {data.get('content', '')}")
            elif data.get("type") == "review":
                print(f"Code Review: {data.get('content')}")
            elif data.get("type") == "error":
                print(f"Error: {data.get('content')}")
            elif data == {"role": "assistant", "type": "status", "content": "complete"}:
                print("Interaction complete")
                break

asyncio.run(websocket_interaction())

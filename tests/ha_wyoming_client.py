"""A Wyoming client as Home Assistant's conversation agent uses one, run by the python of a virtual environment with
the `wyoming` version under test (Home Assistant 2025.4 pins 1.5.4, whose `Transcript` carries no context): a new
connection per request, the text sent, the answer read. Prints one JSON line per request.

    python ha_wyoming_client.py PORT [--context ID] TEXT...
"""

from __future__ import annotations

import argparse
import asyncio
import json
from importlib.metadata import version

from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled, NotHandled


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--context", default="")
    parser.add_argument("texts", nargs="+")
    args = parser.parse_args()
    for text in args.texts:
        transcript = Transcript(text=text)
        if args.context:
            transcript.context = {"conversation_id": args.context}  # sent by the versions that carry it
        async with AsyncTcpClient("127.0.0.1", args.port) as client:  # one connection per request
            await client.write_event(transcript.event())
            while True:
                event = await asyncio.wait_for(client.read_event(), 60)
                if event is None:
                    print(json.dumps({"type": "closed", "text": text}), flush=True)
                    break
                if Handled.is_type(event.type) or NotHandled.is_type(event.type):
                    answer = (Handled if Handled.is_type(event.type) else NotHandled).from_event(event)
                    print(json.dumps({"type": event.type, "text": answer.text, "sent": transcript.event().data,
                                      "wyoming": version("wyoming")}, ensure_ascii=False), flush=True)
                    break


if __name__ == "__main__":
    asyncio.run(main())

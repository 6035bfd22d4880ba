"""Server-Sent Events from a urllib response: `{"id", "event", "data"}` per event (data parsed as JSON)."""
import json
from typing import Any, Dict, Iterator


def read_events(response: Any) -> Iterator[Dict[str, Any]]:
    event_id = 0
    name = "message"
    data: list = []
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                text = "\n".join(data)
                try:
                    payload: Any = json.loads(text)
                except ValueError:
                    payload = text
                yield {"id": event_id, "event": name, "data": payload}
            name, data = "message", []
            continue
        if line.startswith(":"):
            continue  # a keepalive comment
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "id":
            try:
                event_id = int(value)
            except ValueError:
                pass
        elif key == "event":
            name = value
        elif key == "data":
            data.append(value)

# ruff: noqa  (a specimen of code found in the wild, kept in its own style)
"""A meeting scheduler as it is often written in a hurry: ids come from a module-level counter
(``_next_id``), and two tools take a mutable default argument that they then change, so
state leaks from one instance to the next in the same interpreter. The code is kept that way
on purpose: it is what a port must reproduce, or show where it cannot."""

from typing import Any, Dict, List, Optional

_next_id = 1
ROOMS = {"atlas": 8, "borealis": 4, "cove": 12}


def _new_id(prefix: str) -> str:
    global _next_id
    ident = f"{prefix}-{_next_id}"
    _next_id += 1
    return ident


class EventScheduler:
    """Meetings in rooms over hour slots of one day, with attendees and a change log."""

    def __init__(self, scenario: Optional[Dict[str, Any]] = None):
        scenario = scenario or {}
        self.events: Dict[str, Dict[str, Any]] = scenario.get("events", {})
        self.organizer: str = scenario.get("organizer", "me")
        self.changes: List[str] = scenario.get("changes", [])

    def _clashes(self, room: str, start: int, end: int, ignore: str = "") -> List[str]:
        return sorted(eid for eid, ev in self.events.items()
                      if eid != ignore and ev["room"] == room
                      and ev["start"] < end and start < ev["end"])

    def create_event(self, title: str, room: str, start: int, end: int,
                     attendees: List[str] = []) -> Dict[str, Any]:
        """Book a room for a meeting; the organizer is added to the attendees.

        Args:
            title (str): What the meeting is about.
            room (str): "atlas", "borealis" or "cove".
            start (int): The first hour, 0 to 23.
            end (int): The hour it ends, after start, at most 24.
            attendees (list): Names of the people invited.
        """
        if room not in ROOMS:
            return {"status": "error", "message": f"Unknown room: {room}"}
        if not 0 <= start < end <= 24:
            return {"status": "error", "message": "Invalid time range"}
        attendees.append(self.organizer)
        if len(attendees) > ROOMS[room]:
            return {"status": "error", "message": f"{room} holds {ROOMS[room]} people"}
        clashes = self._clashes(room, start, end)
        if clashes:
            return {"status": "error", "message": f"Room busy: {', '.join(clashes)}"}
        event_id = _new_id("EV")
        self.events[event_id] = {"title": title, "room": room, "start": start, "end": end,
                                 "attendees": attendees}
        self.changes.append(f"created {event_id}")
        return {"status": "ok", "event_id": event_id}

    def invite(self, event_id: str, names: List[str] = []) -> Dict[str, Any]:
        """Add people to a meeting, skipping those already invited.

        Args:
            event_id (str): The meeting's id.
            names (list): The people to add.
        """
        event = self.events.get(event_id)
        if event is None:
            return {"status": "error", "message": f"No event {event_id}"}
        added = [n for n in names if n not in event["attendees"]]
        if len(event["attendees"]) + len(added) > ROOMS[event["room"]]:
            return {"status": "error", "message": "Room too small"}
        event["attendees"].extend(added)
        self.changes.append(f"invited {len(added)} to {event_id}")
        return {"status": "ok", "attendees": event["attendees"]}

    def move_event(self, event_id: str, start: int, end: Optional[int] = None) -> Dict[str, Any]:
        """Move a meeting to another start hour, keeping its length unless an end is given.

        Args:
            event_id (str): The meeting's id.
            start (int): The new first hour.
            end (int): The new end hour; the same length as before when left out.
        """
        event = self.events.get(event_id)
        if event is None:
            return {"status": "error", "message": f"No event {event_id}"}
        if end is None:
            end = start + (event["end"] - event["start"])
        if not 0 <= start < end <= 24:
            return {"status": "error", "message": "Invalid time range"}
        clashes = self._clashes(event["room"], start, end, ignore=event_id)
        if clashes:
            return {"status": "error", "message": f"Room busy: {', '.join(clashes)}"}
        event["start"], event["end"] = start, end
        self.changes.append(f"moved {event_id}")
        return {"status": "ok", "start": start, "end": end}

    def cancel_event(self, event_id: str) -> Dict[str, Any]:
        """Cancel a meeting.

        Args:
            event_id (str): The meeting's id.
        """
        if event_id not in self.events:
            return {"status": "error", "message": f"No event {event_id}"}
        del self.events[event_id]
        self.changes.append(f"cancelled {event_id}")
        return {"status": "ok"}

    def free_rooms(self, start: int, end: int, min_capacity: int = 1) -> Dict[str, Any]:
        """The rooms free for a whole time range that hold enough people.

        Args:
            start (int): The first hour.
            end (int): The hour it ends.
            min_capacity (int): The fewest seats needed.
        """
        rooms = [r for r, seats in ROOMS.items()
                 if seats >= min_capacity and not self._clashes(r, start, end)]
        return {"status": "ok", "rooms": rooms}

    def agenda(self, person: Optional[str] = None) -> Dict[str, Any]:
        """The day's meetings in start order, optionally only those a person attends.

        Args:
            person (str): Whose meetings; everyone's when left out.
        """
        rows = [{"event_id": eid, "title": ev["title"], "room": ev["room"],
                 "start": ev["start"], "end": ev["end"]}
                for eid, ev in self.events.items()
                if person is None or person in ev["attendees"]]
        rows.sort(key=lambda row: (row["start"], row["event_id"]))
        return {"status": "ok", "events": rows}

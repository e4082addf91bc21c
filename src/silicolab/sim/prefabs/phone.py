"""A phone with apps: digital actions the game master executes as code (the Concordia
paper's PhoneGameMaster, section 4.1).

People do not fill in forms: an agent says in free text "I text Bob to ask him to dinner on
Friday", and the game master's model translates the attempt into a tool call
(``{"tool": "send_message", "args": {"to": "Bob", "text": ...}}``) which runs as Python.
The apps are typed functions whose docstrings are their manuals:

* ``calendar`` — :func:`add_event`, :func:`list_events`, :func:`cancel_event` over the
  grounded variable ``calendar`` (``{person: [event, ...]}``); an event shared
  ``with_whom`` other people goes into their calendars too, and nobody can be in two
  places at once (the variable's validator refuses a double booking);
* ``messages`` — :func:`send_message` and :func:`read_messages` over ``inbox``
  (``{person: [message, ...]}``); a message is delivered privately to its recipient only.

Every change goes through a :class:`~silicolab.sim.game_master.Resolution` with
``updates``, so the grounded state checks it and the outcome's timeline records it; a bad
call (an unknown recipient, a day that is not a day) is rejected with a message naming the
problem. The ``phone`` game-master prefab is the generic narrator with these apps installed
and the grounded variables declared for every person.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any, Literal

from pydantic import Field

from silicolab.core.errors import InputError
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.grounded import GroundedVariable
from silicolab.sim.prefabs.base import BuildContext, Prefab, register
from silicolab.sim.prefabs.game_masters import (
    NarratorParams,
    scened_options,
    tools_of,
    toolset,
)
from silicolab.sim.prefabs.scened import ScenedGameMaster

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_SEPARATORS = re.compile(r"\s*(?:,|\band\b|&)\s*")

PHONE_INSTRUCTIONS = (
    "The people carry phones with the apps listed as tools below. When the actor uses the "
    "phone (texting someone, reading messages, checking, adding or cancelling calendar "
    "events), do not narrate: reply with only the JSON tool call "
    '{"tool": name, "args": {...}} that carries the attempt out. The tool runs as code and '
    "its result becomes the event."
)


# -- checks shared by the apps --------------------------------------------------------------
def parse_day(day: str) -> str | None:
    """``day`` as a capitalised weekday or an ISO date (``YYYY-MM-DD``), else ``None``."""
    text = day.strip()
    for weekday in WEEKDAYS:
        if text.lower() in (weekday.lower(), weekday[:3].lower()):
            return weekday
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def parse_time(time: str) -> str | None:
    """``time`` as a zero-padded 24-hour ``HH:MM``, else ``None``."""
    match = _TIME.match(time.strip())
    return f"{int(match.group(1)):02d}:{match.group(2)}" if match else None


def person(gm: GameMaster, name: str) -> str | None:
    """The simulation's spelling of the person ``name`` (case-insensitive), else ``None``."""
    wanted = name.strip().lower()
    return next((n for n in gm.entity_names if n.lower() == wanted), None)


def _table(gm: GameMaster, variable: str) -> dict[str, list[dict[str, Any]]]:
    """A copy of a per-person grounded table the apps change (lists copied, so the state
    is only changed by the resolution's updates)."""
    if variable not in gm.state:
        raise InputError(
            f"this game master has no grounded variable {variable!r}: use the phone game "
            f"master, or declare {variable} with an empty list per person in variables"
        )
    current = gm.state[variable]
    return {n: list(current.get(n, [])) for n in dict.fromkeys([*current, *gm.entity_names])}


def _refuse(message: str) -> Resolution:
    return Resolution(message, rejected=True)


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _when(event: Mapping[str, Any]) -> str:
    return f"{event['title']!r} on {event['day']} at {event['time']}"


def calendar_clash(calendar: Mapping[str, Any], _proposed: Mapping[str, Any]) -> str | None:
    """The validator of ``calendar``: ``None``, or what is wrong (an event without a
    title, day and time, e.g. from a narrator's update; someone in two places at once)."""
    for name, events in calendar.items():
        seen: dict[tuple[str, str], str] = {}
        for event in events if isinstance(events, list) else [None]:
            if not isinstance(event, Mapping) or not {"title", "day", "time"} <= set(event):
                return f"{name}'s calendar must be a list of events with title, day and time"
            slot = (event["day"], event["time"])
            if slot in seen:
                return (
                    f"{name} is already busy on {slot[0]} at {slot[1]} ({seen[slot]!r}); "
                    f"cannot also have {event['title']!r} then"
                )
            seen[slot] = event["title"]
    return None


def _render_calendar(value: Mapping[str, Any]) -> str:
    rows = [
        f"{name}: " + ("; ".join(f"{_when(e)}" for e in events) or "nothing planned")
        for name, events in value.items()
    ]
    return "calendar:\n" + "\n".join(f"  {r}" for r in rows)


def _render_inbox(value: Mapping[str, Any]) -> str:
    rows = [
        f"{name}: {len(msgs)} message(s), {sum(not m['read'] for m in msgs)} unread"
        for name, msgs in value.items()
    ]
    return "inbox:\n" + "\n".join(f"  {r}" for r in rows)


def phone_variables(names: list[str] | tuple[str, ...]) -> list[GroundedVariable[Any]]:
    """The grounded variables of the apps, empty for every person: ``calendar`` (double
    bookings refused) and ``inbox``."""
    return [
        GroundedVariable(
            "calendar",
            {n: [] for n in names},
            kind=dict,
            description="each person's events",
            validator=calendar_clash,
            render=_render_calendar,
        ),
        GroundedVariable(
            "inbox",
            {n: [] for n in names},
            kind=dict,
            description="each person's text messages",
            render=_render_inbox,
        ),
    ]


# -- the calendar app -------------------------------------------------------------------------
def add_event(
    actor: str, gm: GameMaster, title: str, day: str, time: str, with_whom: str = ""
) -> Resolution:
    """Add an event to your calendar. day: a weekday (Friday) or a date (2024-05-17); time:
    24-hour HH:MM; with_whom: the people you meet, comma-separated (it goes into their
    calendars too)."""
    title, when_day, when_time = title.strip(), parse_day(day), parse_time(time)
    if not title:
        return _refuse("add_event needs a title, e.g. title='Dinner'")
    if when_day is None:
        return _refuse(f"day={day!r} is not a weekday (e.g. Friday) or a date (YYYY-MM-DD)")
    if when_time is None:
        return _refuse(f"time={time!r} is not a 24-hour time HH:MM, e.g. 19:00")
    asked = [w for w in _SEPARATORS.split(with_whom.strip()) if w]
    unknown = [w for w in asked if person(gm, w) is None]
    if unknown:
        return _refuse(
            f"with_whom names {', '.join(map(repr, unknown))}, not people in this simulation "
            f"(people: {', '.join(gm.entity_names)})"
        )
    guests = list(dict.fromkeys(p for w in asked if (p := person(gm, w)) != actor))
    calendar = _table(gm, "calendar")
    for name in (actor, *guests):
        if any(e["title"].lower() == title.lower() for e in calendar[name]):
            return _refuse(f"{name} already has an event titled {title!r}; pick another title")
    event = {"title": title, "day": when_day, "time": when_time, "with": guests}
    for name in (actor, *guests):
        calendar[name].append({**event, "organizer": actor})
    clash = calendar_clash(calendar, {})
    if clash:
        return _refuse(clash)
    together = f" with {_names(guests)}" if guests else ""
    return Resolution(
        f"{actor} added {_when(event)}{together} to the calendar.",
        updates={"calendar": calendar},
        observers=(actor,),
        private={
            g: f"{actor} invited you to {_when(event)}; it is in your calendar." for g in guests
        },
    )


def list_events(actor: str, gm: GameMaster) -> Resolution:
    """Show the events in your calendar."""
    events = _table(gm, "calendar")[actor]
    shown = []
    for e in events:
        others = [n for n in dict.fromkeys([e["organizer"], *e["with"]]) if n != actor]
        together = f" with {_names(others)}" if others else ""
        host = f" (organised by {e['organizer']})" if e["organizer"] != actor else ""
        shown.append(f"- {_when(e)}{together}{host}")
    listing = "Your calendar:\n" + "\n".join(shown) if shown else "Your calendar is empty."
    return Resolution(
        f"{actor} checked the calendar.", observers=(actor,), private={actor: listing}
    )


def cancel_event(actor: str, gm: GameMaster, title: str) -> Resolution:
    """Remove an event from your calendar by its title; if you organised it, it is cancelled
    for everyone invited."""
    calendar = _table(gm, "calendar")
    found = next((e for e in calendar[actor] if e["title"].lower() == title.strip().lower()), None)
    if found is None:
        titles = ", ".join(repr(e["title"]) for e in calendar[actor]) or "none"
        return _refuse(f"{actor} has no event titled {title!r} (events: {titles})")
    if found["organizer"] == actor:
        affected = [actor, *found["with"]]
        private = {g: f"{actor} cancelled {_when(found)}." for g in found["with"]}
    else:
        affected = [actor]
        private = {found["organizer"]: f"{actor} will not come to {_when(found)}."}
    for name in affected:
        calendar[name] = [
            e
            for e in calendar[name]
            if not (e["title"] == found["title"] and e["organizer"] == found["organizer"])
        ]
    return Resolution(
        f"{actor} cancelled {_when(found)}.",
        updates={"calendar": calendar},
        observers=(actor,),
        private={n: t for n, t in private.items() if n in gm.entity_names},
    )


# -- the messages app -------------------------------------------------------------------------
def send_message(actor: str, gm: GameMaster, to: str, text: str) -> Resolution:
    """Text one person (to: their name); only they receive it."""
    recipient = person(gm, to)
    if recipient is None:
        return _refuse(
            f"to={to!r} is not someone in this simulation (people: {', '.join(gm.entity_names)})"
        )
    if recipient == actor:
        return _refuse(f"{actor} cannot text themselves; to= must name someone else")
    if not text.strip():
        return _refuse("send_message needs a text, e.g. text='Dinner on Friday?'")
    inbox = _table(gm, "inbox")
    message = {"from": actor, "text": text.strip(), "time": gm.clock.text(), "read": False}
    inbox[recipient].append(message)
    return Resolution(
        f'{actor} texted {recipient}: "{message["text"]}"',
        updates={"inbox": inbox},
        observers=(actor,),
        private={recipient: f'New message from {actor}: "{message["text"]}"'},
    )


def read_messages(actor: str, gm: GameMaster) -> Resolution:
    """Read your new text messages (they are then marked as read)."""
    inbox = _table(gm, "inbox")
    unread = [m for m in inbox[actor] if not m["read"]]
    if not unread:
        listing = "You have no new messages."
    else:
        listing = "New messages:\n" + "\n".join(
            f'- {m["time"]} from {m["from"]}: "{m["text"]}"' for m in unread
        )
    inbox[actor] = [{**m, "read": True} for m in inbox[actor]]
    return Resolution(
        f"{actor} read {len(unread)} new message(s).",
        updates={"inbox": inbox} if unread else {},
        observers=(actor,),
        private={actor: listing},
    )


@toolset("calendar")
def calendar_app() -> list[Any]:
    """The calendar app: add, list and cancel events."""
    return [add_event, list_events, cancel_event]


@toolset("messages")
def messages_app() -> list[Any]:
    """The messages app: send and read text messages."""
    return [send_message, read_messages]


# -- the phone game master --------------------------------------------------------------------
class PhoneGameMaster(ScenedGameMaster):
    """The narrator told to answer phone use with a JSON tool call (run as code)."""

    def prompt(self, attempt: Attempt) -> list[dict[str, str]]:
        """The narrator's messages with the phone instructions added to the system part
        (the user part still ends with the actor and the attempted action)."""
        messages = super().prompt(attempt)
        messages[0] = {
            **messages[0],
            "content": f"{messages[0]['content']}\n\n{PHONE_INSTRUCTIONS}",
        }
        return messages


class PhoneParams(NarratorParams):
    apps: list[Literal["calendar", "messages"]] = Field(
        default_factory=lambda: ["calendar", "messages"], description="phone apps installed"
    )


@register
class Phone(Prefab):
    name = "phone"
    kind = "game_master"
    description = "narrator with a phone: calendar and messages apps run as code"
    Params = PhoneParams

    @classmethod
    def build(cls, name: str, params: PhoneParams, ctx: BuildContext) -> PhoneGameMaster:
        options = scened_options(name, params, ctx)
        state = options["state"]
        wanted = {"calendar": "calendar", "messages": "inbox"}
        for var in phone_variables(ctx.entity_names):
            if var.name in {wanted[a] for a in params.apps} and var.name not in state:
                state.add(var)
        return PhoneGameMaster(
            model=ctx.gm_model,
            narrated=params.narrated,
            tools=tools_of(list(dict.fromkeys([*params.apps, *params.toolsets]))),
            **options,
        )

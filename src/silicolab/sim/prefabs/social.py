"""Narrator game masters for worlds with places and with a social-media feed.

* ``situated`` — the ``generic`` narrator situated in time and place: the grounded variable
  ``location`` (entity -> place, every value a known place) which the narrator may change
  and the ``move(to=...)`` tool (tool set ``places``) changes as code; at every step each
  participant is told "It is <time> at <place>.";
* ``social_media`` — the narrator plus a feed: ``post``, ``reply`` and ``like`` (tool set
  ``feed``) run as code on the grounded variables ``posts`` and ``likes_received``; a post
  is delivered to its author's followers only. Free-text attempts that use no tool are
  narrated as usual.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field, model_validator

from silicolab.core.errors import InputError
from silicolab.sim.engines import deliver
from silicolab.sim.entity import Entity
from silicolab.sim.game_master import GameMaster, Resolution
from silicolab.sim.grounded import GroundedVariable
from silicolab.sim.log import EpisodeLog
from silicolab.sim.prefabs.base import BuildContext, Prefab, register
from silicolab.sim.prefabs.game_masters import NarratorParams, scened_options, tools_of, toolset
from silicolab.sim.prefabs.scened import ScenedGameMaster

# -- situated: time and place -----------------------------------------------------------


class SituatedParams(NarratorParams):
    """The narrator's parameters plus ``locations`` (the known places) and
    ``start_location`` (entity -> place; anyone not named starts at the first place)."""

    locations: list[str] = Field(..., min_length=1)
    start_location: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _places(self) -> SituatedParams:
        if len(set(self.locations)) != len(self.locations):
            raise ValueError(f"locations must be unique, got {self.locations}")
        unknown = sorted(set(self.start_location.values()) - set(self.locations))
        if unknown:
            raise ValueError(f"start_location names unknown places {unknown}")
        if "location" in {v.name for v in self.variables}:
            raise ValueError("the variable 'location' is the situated game master's own")
        return self


def _known_places(places: Sequence[str]) -> Callable[[Any, Mapping[str, Any]], str | None]:
    def check(value: Any, _proposed: Mapping[str, Any]) -> str | None:
        bad = sorted({str(v) for v in value.values()} - set(places))
        if bad:
            return f"{', '.join(bad)} is not a known place; known places: {', '.join(places)}"
        return None

    return check


class SituatedGameMaster(ScenedGameMaster):
    """A narrator that tells each participant the time and their place every step."""

    async def aplay(
        self, step: int, entities: Sequence[Entity], log: EpisodeLog, *, simultaneous: bool
    ) -> None:
        """Tell every participant "It is <time> at <place>." then play the step."""
        actors = self._participants(entities, step)
        where = self.state["location"]
        for actor in actors:
            self.tell(actor.name, f"It is {self.clock.text()} at {where[actor.name]}.")
        deliver(self, actors, log, step)
        await super().aplay(step, entities, log, simultaneous=simultaneous)


@toolset("places")
def _places_tools() -> list[Callable[..., Any]]:
    def move(to: str, actor: str, gm: GameMaster) -> Resolution:
        """Go to another place (one of the known locations)."""
        where = dict(gm.state["location"])
        if where.get(actor) == to:
            return Resolution(f"{actor} is already at {to}.", rejected=True)
        where[actor] = str(to)
        return Resolution(f"{actor} goes to {to}.", updates={"location": where})

    return [move]


@register
class Situated(Prefab):
    name = "situated"
    kind = "game_master"
    description = "narrator situated in time and place: locations, a move tool, the time"
    Params = SituatedParams

    @classmethod
    def build(cls, name: str, params: SituatedParams, ctx: BuildContext) -> SituatedGameMaster:
        unknown = sorted(set(params.start_location) - set(ctx.entity_names))
        if unknown:
            raise InputError(f"start_location names {unknown}, who are not entities")
        options = scened_options(name, params, ctx)
        start = {n: params.start_location.get(n, params.locations[0]) for n in ctx.entity_names}
        options["state"].add(
            GroundedVariable(
                "location",
                start,
                kind=dict,
                description="where each person is",
                validator=_known_places(params.locations),
            )
        )
        names = [*params.toolsets, *(["places"] if "places" not in params.toolsets else [])]
        return SituatedGameMaster(
            model=ctx.gm_model,
            narrated=[*params.narrated, "location"],
            tools=tools_of(names),
            **options,
        )


# -- social media: a feed ---------------------------------------------------------------


class SocialMediaParams(NarratorParams):
    """The narrator's parameters plus ``followers``: entity -> the entities it follows
    (default: everyone follows everyone else)."""

    followers: dict[str, list[str]] | None = None

    @model_validator(mode="after")
    def _own_variables(self) -> SocialMediaParams:
        taken = {"posts", "likes_received"} & {v.name for v in self.variables}
        if taken:
            raise ValueError(f"variables {sorted(taken)} are the feed's own; rename them")
        return self


class SocialMediaGameMaster(ScenedGameMaster):
    """A narrator with a feed; ``follows`` maps each entity to whom it follows."""

    def __init__(self, *, follows: Mapping[str, Sequence[str]], **options: Any):
        super().__init__(**options)
        self.follows = {n: tuple(f) for n, f in follows.items()}

    def audience(self, author: str) -> tuple[str, ...]:
        """Who sees ``author``'s posts: the author and everyone who follows them."""
        return tuple(n for n, f in self.follows.items() if n == author or author in f)


def _post_of(gm: GameMaster, post_id: Any) -> dict[str, Any] | None:
    for post in gm.state["posts"]:
        if post["id"] == post_id:
            return post
    return None


def _unknown_post(post_id: Any, gm: GameMaster) -> Resolution:
    ids = ", ".join(str(p["id"]) for p in gm.state["posts"]) or "none yet"
    return Resolution(f"there is no post {post_id!r} (posts: {ids})", rejected=True)


@toolset("feed")
def _feed_tools() -> list[Callable[..., Any]]:
    def post(text: str, actor: str, gm: SocialMediaGameMaster) -> Resolution:
        """Publish a post that your followers will see."""
        posts = copy.deepcopy(gm.state["posts"])
        new = {"id": len(posts) + 1, "author": actor, "text": str(text), "likes": 0}
        posts.append({**new, "liked_by": [], "replies": []})
        event = f"{actor} posted #{new['id']}: {text}"
        return Resolution(event, updates={"posts": posts}, observers=gm.audience(actor))

    def reply(to: int, text: str, actor: str, gm: SocialMediaGameMaster) -> Resolution:
        """Reply to the post with id ``to``."""
        if _post_of(gm, to) is None:
            return _unknown_post(to, gm)
        posts = copy.deepcopy(gm.state["posts"])
        target = next(p for p in posts if p["id"] == to)
        target["replies"].append({"author": actor, "text": str(text)})
        seen = (*gm.audience(actor), target["author"])
        event = f"{actor} replied to #{to} by {target['author']}: {text}"
        return Resolution(event, updates={"posts": posts}, observers=tuple(dict.fromkeys(seen)))

    def like(post_id: int, actor: str, gm: SocialMediaGameMaster) -> Resolution:
        """Like the post with id ``post_id`` (once; not your own)."""
        found = _post_of(gm, post_id)
        if found is None:
            return _unknown_post(post_id, gm)
        if found["author"] == actor or actor in found["liked_by"]:
            why = "your own post" if found["author"] == actor else "a post you already liked"
            return Resolution(f"you cannot like {why} (#{post_id})", rejected=True)
        posts = copy.deepcopy(gm.state["posts"])
        target = next(p for p in posts if p["id"] == post_id)
        target["likes"] += 1
        target["liked_by"].append(actor)
        received = dict(gm.state["likes_received"])
        received[target["author"]] = received.get(target["author"], 0) + 1
        updates = {"posts": posts, "likes_received": received}
        event = f"{actor} liked #{post_id} by {target['author']}."
        return Resolution(event, updates=updates, observers=(actor, target["author"]))

    return [post, reply, like]


@register
class SocialMedia(Prefab):
    name = "social_media"
    kind = "game_master"
    description = "narrator with a feed: post, reply and like tools; posts reach followers"
    Params = SocialMediaParams

    @classmethod
    def build(
        cls, name: str, params: SocialMediaParams, ctx: BuildContext
    ) -> SocialMediaGameMaster:
        names = list(ctx.entity_names)
        follows = params.followers
        if follows is None:
            follows = {n: [m for m in names if m != n] for n in names}
        unknown = sorted(({*follows} | {m for f in follows.values() for m in f}) - set(names))
        if unknown:
            raise InputError(f"followers names {unknown}, who are not entities")
        options = scened_options(name, params, ctx)
        options["state"].add(GroundedVariable("posts", [], kind=list, description="the feed"))
        options["state"].add(
            GroundedVariable("likes_received", {n: 0 for n in names}, kind=dict, description="")
        )
        sets = [*params.toolsets, *(["feed"] if "feed" not in params.toolsets else [])]
        return SocialMediaGameMaster(
            follows={n: follows.get(n, []) for n in names},
            model=ctx.gm_model,
            narrated=params.narrated,
            tools=tools_of(sets),
            **options,
        )

"""Simulations as values and files: YAML round trips, errors with file, line and field,
seeds, checkpoints and resume, against the built-in election world."""

from __future__ import annotations

from pathlib import Path

import pytest

from silicolab.core.errors import InputError
from silicolab.sim.simulation import Simulation
from silicolab.sim.worlds import list_worlds, load_world, world_names, world_text, write_world


def test_every_built_in_world_round_trips_and_replays_identically() -> None:
    for name in world_names():
        sim = load_world(name)
        again = Simulation.from_yaml(sim.to_yaml())
        assert again == sim, name
        assert Simulation.from_yaml(again.to_yaml()).to_yaml() == sim.to_yaml(), name
        first, second = sim.run(seed=3), again.run(seed=3)
        assert first.to_dict() == second.to_dict(), name
        assert 0 < first.steps <= sim.steps(sim.build()[0]), name  # a game may end early


def test_the_election_tallies_the_offline_votes() -> None:
    outcome = load_world("election").run(seed=0)
    # offline rules: Carol and Dan vote Alice, Erin votes Bob
    assert outcome.final_state["votes"] == {"Alice": 2, "Bob": 1}
    votes = [r for r in outcome.timeline if r["variable"] == "votes"]
    assert [r["after_step"] for r in votes] == [0, 0, 4, 4, 4]
    assert {r["entity"]: r.get("votes") for r in outcome.per_entity[:2]} == {"Alice": 2, "Bob": 1}
    choices = [s for s in outcome.log.to_list() if s["kind"] == "action" and s["step"] == 3]
    assert [s["output"] for s in choices] == ["Alice", "Alice", "Bob"]


def _bad(text: str, tmp_path: Path) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        Simulation.load(path)
    return str(err.value)


def test_a_bad_edit_is_refused_with_file_line_and_field(tmp_path: Path) -> None:
    text = world_text("election")
    lines = text.splitlines()
    goal = next(i for i, line in enumerate(lines) if "goal: Win the election by" in line)
    lines[goal] = "    goal: [not, a, string]"
    message = _bad("\n".join(lines), tmp_path)
    assert f"mine.yaml, line {goal + 1} (entities.0.params.goal)" in message
    assert "valid string" in message

    message = _bad(text.replace("prefab: with_plan", "prefab: with_plans"), tmp_path)
    line = next(i for i, x in enumerate(lines) if "prefab: with_plan" in x) + 1
    assert f"line {line} (entities.1.prefab)" in message and "known: basic" in message

    message = _bad(text + "\nsteps: 3\n", tmp_path)
    assert "(steps)" in message and "Extra inputs are not permitted" in message

    message = _bad(text.replace("rounds: 2", "rounds: 0"), tmp_path)
    assert "(game_master.params.scenes.0.rounds)" in message

    message = _bad("name: x\nentities: [\n", tmp_path)
    assert "mine.yaml, line" in message and "not valid YAML" in message


def test_scenes_naming_unknown_people_are_refused_before_anything_runs() -> None:
    sim = load_world("election")
    scenes = [{"name": "x", "participants": ["Zed"]}]
    gm = sim.game_master.model_copy(update={"params": {**sim.game_master.params, "scenes": scenes}})
    with pytest.raises(InputError, match=r"names \['Zed'\] who are not entities"):
        sim.model_copy(update={"game_master": gm}).build()


def test_a_checkpointed_run_resumed_equals_the_uninterrupted_run(tmp_path: Path) -> None:
    sim = load_world("election")
    whole = sim.run(seed=1).to_dict()
    for stop in (1, 2, 3):
        path = tmp_path / f"cp{stop}.json"
        sim.model_copy(update={"max_steps": stop}).run(seed=1, checkpoint=path)
        resumed = sim.run(seed=1, checkpoint=path, resume=True).to_dict()
        assert resumed == whole, stop


def test_write_world_copies_and_keeps_an_edited_copy(tmp_path: Path) -> None:
    target = write_world("election", tmp_path / "e.yaml")
    assert Simulation.load(target) == load_world("election")
    target.write_text(target.read_text() + "\n# my edit\n")
    with pytest.raises(InputError, match="force=True"):
        write_world("election", target)
    write_world("election", target, force=True)
    assert "# my edit" not in target.read_text()
    assert {"name": "election", "game_master": "generic"}.items() <= next(
        w for w in list_worlds() if w["name"] == "election"
    ).items()

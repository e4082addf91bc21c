"""The text interface: menus, value entry, locked screens, reactor status, step counting."""

from __future__ import annotations

from silicolab.envs.causalab import TARGET, CrystalLab, load_suite

BASES = {
    "manipulator": {"density": 39, "moisture": 86, "quantumSize": 70},
    "reactor": {"moisture": 34, "density": 97, "quantumSize": 17},
}


def lab(**kw) -> CrystalLab:
    return CrystalLab(
        load_suite("4nodes")[0], fidelity=kw.pop("fidelity", "faithful"), bases=BASES, **kw
    )


def test_room_screen_lists_the_two_devices() -> None:
    screen = lab().text_observation()
    assert "Property Manipulator (id 101)" in screen and "Crystal Reactor (id 102)" in screen


def test_manipulator_menu_value_entry_and_panel_update() -> None:
    env = lab()
    screen = env.text_step({"action": "TALK", "arg1": 101})
    assert "PROPERTY MANIPULATOR" in screen and "Crystal Analysis:" in screen
    assert "Resonance Frequency (Hz): 150.0" in screen
    assert "Uses: 0/12 (Remaining: 12)" in screen
    for line in ("1: Adjust Quantum Size", "2: Adjust Density", "3: Adjust Moisture", "4: Exit"):
        assert line in screen
    screen = env.text_step({"chosen_dialog_option_int": 3})
    assert "Moisture Value Setting" in screen and '"value"' in screen
    assert "[Do not select this option]" in screen
    screen = env.text_step({"value": 50})
    assert "Resonance Frequency (Hz): 114.0" in screen and "Moisture: 50.0" in screen
    assert "Uses: 1/12 (Remaining: 11)" in screen
    assert env.budget_used == 1 and env.env_steps == 3  # talk, select, value


def test_invalid_actions_return_a_message_and_cost_no_budget() -> None:
    env = lab()
    env.text_step({"action": "TALK", "arg1": "manipulator"})
    screen = env.text_step({"chosen_dialog_option_int": 9})
    assert "Option 9 does not exist" in screen and env.budget_used == 0
    env.text_step({"chosen_dialog_option_int": "2"})
    screen = env.text_step({"chosen_dialog_option_int": 1})  # the placeholder option
    assert "A value is expected" in screen and "Density Value Setting" in screen
    screen = env.text_step({"value": "a lot"})
    assert "must be a number" in screen and "1: Adjust Quantum Size" in screen  # back to menu
    screen = env.text_step({"action": "TALK", "arg1": 102})
    assert "You are in a dialog" in screen
    assert env.budget_used == 0 and env.phase == "manipulator"
    assert env.env_steps == 6  # every call to the environment is one step


def test_locked_screen_when_the_budget_is_used() -> None:
    env = lab(budget=1)
    env.text_step({"action": "TALK", "arg1": 101})
    env.text_step({"chosen_dialog_option_int": 1})
    screen = env.text_step({"value": 100})
    assert "LOCKED" in screen and "1: Exit" in screen and "Adjust" not in screen
    assert "Quantum Size: 100.0" in screen  # the panel stays readable
    screen = env.text_step({"chosen_dialog_option_int": 1})
    assert "You are in the Causal Discovery Lab" in screen


def test_reactor_dialog_status_lines_and_success() -> None:
    env = lab()
    screen = env.text_step({"action": "TALK", "arg1": "Crystal Reactor"})
    assert "CRYSTAL REACTOR #1" in screen and "Crystal properties (directly shown):" in screen
    assert "- temperatureC: 25.0" in screen and "- quantumSize: 114" in screen
    assert "Current resonance frequency: 0 Hz" in screen
    assert "Allowable range: 0 to 10,000 Hz" in screen and "Crystal Reactor ready" in screen
    assert env.phase == "reactor"
    env.text_step({"chosen_dialog_option_int": 1})
    screen = env.text_step({"value": 99.26})
    assert "Frequency set to 99.26 Hz. Usage: 1/3 submissions. Remaining: 2" in screen
    assert "Current resonance frequency: 99 Hz" in screen
    env.text_step({"chosen_dialog_option_int": 2})  # exit: the manipulator stays locked
    screen = env.text_step({"action": "TALK", "arg1": 101})
    assert "LOCKED" in screen and "Adjust" not in screen
    env.text_step({"chosen_dialog_option_int": 1})
    env.text_step({"action": "TALK", "arg1": 102})
    env.text_step({"chosen_dialog_option_int": 1})
    screen = env.text_step({"value": 156})
    assert env.success and env.done and "task complete" in screen


def test_acting_after_the_end_costs_nothing() -> None:
    env = lab()
    screen = env.text_step({"action": "SUBMIT", "arg1": "done"})
    assert env.done and not env.success and "episode is over" in screen
    steps = env.env_steps
    screen = env.text_step({"action": "TALK", "arg1": 101})
    assert "no further actions" in screen and env.env_steps == steps


def test_step_cap_in_the_text_interface() -> None:
    env = lab(max_env_steps=3)
    for _ in range(2):
        env.text_step({"action": "WAIT"})
    screen = env.text_step({"action": "WAIT"})
    assert env.done and "step limit" in screen and env.end_reason == "step limit reached"


def test_unknown_actions_and_objects_are_explained() -> None:
    env = lab()
    assert "valid actions are" in env.text_step({"action": "DANCE"})
    assert "No object 'oven'" in env.text_step({"action": "TALK", "arg1": "oven"})
    assert "Unknown action" in env.text_step({"value": 3})
    assert env.budget_used == 0


def test_hidden_suite_task_text_mentions_the_hidden_variable() -> None:
    config = load_suite("4nodes_hidden_freqnode_n1")[0]
    text = CrystalLab(config).task_text()
    assert "hidden variable" in text and "frequency itself" in text
    assert TARGET not in CrystalLab(load_suite("4nodes")[0]).task_text().split("EXISTING")[0]

"""The crystal lab as text: the task description, the room, the two devices' menus.

This replaces the published 2-D world with the part of it the task uses (spec §2, §4.4):
a room with the Property Manipulator and the Crystal Reactor, numbered dialog menus, a
value-entry mode, the manipulator's locked screen and the reactor's status line. Agents act
with the DSL action fields: ``{"action": "TALK", "arg1": <device>}`` (also
``TELEPORT_TO_OBJECT``, ``WAIT``, ``SUBMIT``), ``{"chosen_dialog_option_int": n}`` inside a
menu, and ``{"value": number}`` when a value is asked for.

Every accepted or refused action costs one environment step (the published cap counts
environment calls); refused actions return the environment's message, change nothing and
never cost intervention budget. Once the episode is over nothing costs anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from silicolab.envs.causalab.lab import MAX_SUBMISSIONS, TOLERANCE
from silicolab.envs.causalab.suite import TARGET
from silicolab.envs.errors import InvalidAction

if TYPE_CHECKING:
    from silicolab.envs.causalab.lab import CrystalLab

DEVICES = {
    "manipulator": (
        "Property Manipulator",
        101,
        "holds the quantum crystal for property manipulation",
    ),
    "reactor": ("Crystal Reactor", 102, "holds the quantum crystal for reactor activation"),
}
ROOM_ACTIONS = ("TALK", "TELEPORT_TO_OBJECT", "WAIT", "SUBMIT")
RULE = "-" * 44


def _box(*lines: str) -> str:
    width = max(len(line) for line in lines) + 6
    edge = "+" + "=" * width + "+"
    return "\n".join([edge, *("|" + line.center(width) + "|" for line in lines), edge])


def _options(options: list[str]) -> str:
    listed = "\n".join(f"  {i}: {text}" for i, text in enumerate(options, start=1))
    return f'Select an option (reply with "chosen_dialog_option_int"):\n{listed}'


def _device(arg: Any) -> str | None:
    """Which device ``arg`` names: its id, its name, or a word of its name."""
    text = str(arg).strip().lower() if arg is not None else ""
    for key, (name, uuid, _) in DEVICES.items():
        if text in (str(uuid), name.lower(), key) or (text and text in name.lower().split()):
            return key
    return None


class TextSession:
    """Where the agent is (room, a device menu, or a value prompt) and the last message."""

    def __init__(self, lab: CrystalLab) -> None:
        self.lab = lab
        self.place: Literal["room", "manipulator", "reactor"] = "room"
        self.pending: str | None = None  # property (or "frequency") awaiting a value
        self.message = ""
        self.refused = False

    # -- screens ---------------------------------------------------------------------------

    def screen(self) -> str:
        """The current screen (the message of the last action first, if any)."""
        lab = self.lab
        if lab.done:
            body = self._done_screen()
        elif self.place == "manipulator":
            body = self._manipulator_screen()
        elif self.place == "reactor":
            body = self._reactor_screen()
        else:
            body = self._room_screen()
        parts = [self.message] if self.message else []
        parts.append(body)
        if not lab.done:
            parts.append(f"[environment steps used: {lab.env_steps}/{lab.max_env_steps}]")
        return "\n\n".join(parts)

    def _room_screen(self) -> str:
        objects = "\n".join(
            f"  - {name} (id {uuid}): {what}" for name, uuid, what in DEVICES.values()
        )
        return (
            "You are in the Causal Discovery Lab.\n"
            f"Objects you can interact with:\n{objects}\n"
            "Actions: TALK or TELEPORT_TO_OBJECT with arg1 = an object's name or id; WAIT; "
            'SUBMIT (ends the episode). Example: {"action": "TALK", "arg1": 101}'
        )

    def _panel(self) -> str:
        lab = self.lab
        names = lab.config.display_names
        rows = "\n".join(f"  {names.get(n, n)}: {v}" for n, v in lab.observe().items())
        return f"Crystal Analysis:\n{rows}"

    def _uses(self) -> str:
        lab = self.lab
        return f"Uses: {lab.budget_used}/{lab.budget} (Remaining: {lab.budget_left})"

    def _manipulator_options(self) -> list[str]:
        lab = self.lab
        if lab.phase != "manipulator" or lab.budget_left <= 0:
            return ["Exit"]
        names = lab.config.display_names
        return [f"Adjust {names.get(n, n)}" for n in lab.config.controllable] + ["Exit"]

    def _manipulator_screen(self) -> str:
        lab = self.lab
        header = _box("PROPERTY MANIPULATOR", "Causal Discovery Machine")
        if self.pending is not None:
            display = lab.config.display_names.get(self.pending, self.pending)
            return "\n".join(
                [
                    header,
                    f"{display} Value Setting",
                    f"Enter the new value for {display}: "
                    'reply with a JSON field "value": <number>.',
                    "",
                    self._panel(),
                    RULE,
                    _options(['[Do not select this option] reply with "value" instead']),
                ]
            )
        lines = [header, self._panel(), RULE, self._uses()]
        if lab.phase != "manipulator":
            lines.append("LOCKED: the Crystal Reactor has been used; no more adjustments.")
        elif lab.budget_left <= 0:
            lines.append("LOCKED: no adjustments remain; the crystal can still be read.")
        lines.append(_options(self._manipulator_options()))
        return "\n".join(lines)

    def _reactor_screen(self) -> str:
        lab = self.lab
        props = "\n".join(f"  - {n}: {v}" for n, v in lab.reactor_properties().items())
        last = next((e for e in reversed(lab.history) if e["event"] == "submit"), None)
        setting = int(last["frequency"]) if last else 0
        if last is None:
            status = "Crystal Reactor ready; set the frequency to activate it."
        else:
            status = (
                f"Frequency set to {last['frequency']:g} Hz. "
                f"Usage: {lab.submissions}/{MAX_SUBMISSIONS} "
                f"submissions. Remaining: {lab.submissions_left}"
            )
        lines = [
            _box("CRYSTAL REACTOR #1"),
            "Crystal properties (directly shown):",
            props,
            f"Current resonance frequency: {setting} Hz",
        ]
        if lab.fidelity == "faithful":
            lines.append("Allowable range: 0 to 10,000 Hz")
        lines.append(status)
        if self.pending is not None:
            lines += [
                'Enter the frequency to set: reply with a JSON field "value": <number>.',
                _options(['[Do not select this option] reply with "value" instead']),
            ]
        else:
            lines.append(_options(["Set frequency to a specific value", "Exit"]))
        return "\n".join(lines)

    def _done_screen(self) -> str:
        lab = self.lab
        outcome = "the reactor is active, task complete" if lab.success else "task not completed"
        return f"The episode is over ({lab.end_reason}): {outcome}."

    # -- actions ---------------------------------------------------------------------------

    def step(self, action: Mapping[str, Any]) -> str:
        """Apply one action and return the new screen (see the module docstring)."""
        lab = self.lab
        if lab.done:
            self.message = (
                f"The episode is over ({lab.end_reason}); no further actions are accepted."
            )
            return self.screen()
        self.message = ""
        self.refused = False
        try:
            if not isinstance(action, Mapping):
                raise InvalidAction(f"An action must be a JSON object; got {action!r}.")
            self._dispatch(action)
        except InvalidAction as refused:
            self.message = refused.message
            self.refused = True
        lab._tick()
        if lab.done and lab.end_reason == "step limit reached":
            self.message = (self.message + "\n" if self.message else "") + (
                "The environment step limit is reached; the episode ends."
            )
        return self.screen()

    def _dispatch(self, action: Mapping[str, Any]) -> None:
        if self.pending is not None:
            return self._enter_value(action)
        if self.place != "room":
            if "chosen_dialog_option_int" in action:
                return self._choose(action["chosen_dialog_option_int"])
            if str(action.get("action", "")).upper() == "WAIT":
                return None
            raise InvalidAction(
                'You are in a dialog: reply with "chosen_dialog_option_int" (a menu number).'
            )
        return self._room_action(action)

    def _room_action(self, action: Mapping[str, Any]) -> None:
        lab = self.lab
        name = str(action.get("action", "")).upper()
        if name not in ROOM_ACTIONS:
            raise InvalidAction(
                f"Unknown action {action.get('action')!r}; valid actions are {list(ROOM_ACTIONS)} "
                '(use "chosen_dialog_option_int" and "value" only inside a device dialog).'
            )
        if name == "WAIT":
            self.message = "You wait."
        elif name == "SUBMIT":
            lab.end("the agent submitted (ended) the episode")
        else:
            device = _device(action.get("arg1"))
            if device is None:
                raise InvalidAction(
                    f"No object {action.get('arg1')!r} here; objects are the Property "
                    "Manipulator (id 101) and the Crystal Reactor (id 102)."
                )
            if name == "TELEPORT_TO_OBJECT":
                self.message = f"You are now next to the {DEVICES[device][0]}."
            else:
                if device == "reactor":
                    lab._open_reactor()
                self.place = device  # type: ignore[assignment]

    def _option_number(self, raw: Any, count: int) -> int:
        number = None
        if not isinstance(raw, bool):
            try:
                number = int(str(raw).strip())
            except ValueError:
                number = None
        if number is None or not 1 <= number <= count:
            raise InvalidAction(
                f"Option {raw!r} does not exist; choose a number from 1 to {count}."
            )
        return number

    def _choose(self, raw: Any) -> None:
        lab = self.lab
        if self.place == "reactor":
            if self._option_number(raw, 2) == 1:
                self.pending = "frequency"
            else:
                self.place = "room"
            return
        options = self._manipulator_options()
        number = self._option_number(raw, len(options))
        if number == len(options):
            self.place = "room"
        else:
            self.pending = lab.config.controllable[number - 1]

    def _enter_value(self, action: Mapping[str, Any]) -> None:
        lab = self.lab
        pending, self.pending = self.pending, None
        if "value" not in action:
            self.pending = pending
            raise InvalidAction('A value is expected: reply with a JSON field "value": <number>.')
        if pending == "frequency":
            result = lab._submit(action["value"])
            self.message = result.message
            return
        assert pending is not None
        lab._intervene(pending, action["value"])
        display = lab.config.display_names.get(pending, pending)
        self.message = f"{display} set to {float(action['value']):g}."


def _observation_line(record: Mapping[str, Any]) -> str:
    return repr(dict(record))


def task_text(lab: CrystalLab) -> str:
    """The task description (our wording of the published one, spec §7.2)."""
    config = lab.config
    quadratic = config.family == "quadratic"
    relation = (
        "QUADRATIC relations: each cause contributes a*x^2 + b*x"
        if quadratic
        else "LINEAR relations: each cause contributes k*x"
    )
    lines = [
        "You are a scientist in the Causal Discovery Lab on Planet X. Quantum crystals have "
        "several properties, some of which cause others.",
        "",
        "What is known:",
        f"1. The resonance frequency is determined by some of the properties through {relation}. "
        "It cannot be set directly; it only changes when its causes change.",
        "2. The causal relations form a directed acyclic graph: no cycles, no two-way links "
        "(diamond shapes are possible).",
        "3. You may adjust one property at a time; other properties may change as a consequence.",
        "4. Each property equals its own base value plus the contributions of its causes. The "
        "frequency's base value is fixed. Adjusting a property changes its base value, so the "
        "property shows the value you set and the change propagates to its effects; if its "
        "causes change later, it moves with them.",
        "",
        "Stage 1 (discovery): an experiment crystal sits in the Property Manipulator. You may "
        f"adjust its properties at most {lab.budget} time(s). If no adjustment is allowed, rely on "
        "the observations below and the manipulator's crystal panel.",
        "Stage 2 (reactor): the Crystal Reactor holds a different target crystal whose frequency "
        "cannot be measured. Read its properties from the reactor, compute its resonance "
        f"frequency and set the reactor to it; it activates within ±{TOLERANCE:g} Hz. Using the "
        f"reactor locks the manipulator for good. You have {MAX_SUBMISSIONS} submission attempts.",
    ]
    if config.hidden is not None:
        target_hit = TARGET in config.hidden.affected_nodes
        lines += [
            "",
            "Note: an unobservable hidden variable may change by itself at each adjustment and "
            "slightly shift some properties after propagation"
            + (", possibly the frequency itself or its direct causes" if target_hit else "")
            + ". Nothing influences it, and it is absent from the records below and from the "
            "reactor stage. Treat requested values as plans and observed values as evidence.",
        ]
    if config.frequency_can_be_parent:
        lines += [
            "",
            "Note: the frequency is still not adjustable, but it may itself cause other "
            "properties; do not assume it is a sink.",
        ]
    lines += ["", "EXISTING OBSERVATIONS:"]
    if lab.prior_records:
        lines += [
            f"- Observation {i}: {_observation_line(r)}"
            for i, r in enumerate(lab.prior_records, start=1)
        ]
    else:
        lines.append("(none)")
    if lab.golden_records:
        lines += ["", "The following data are provided up front (an offline intervention chain):"]
        for i, record in enumerate(lab.golden_records, start=1):
            props, freq = record["props"], record["freq"]
            step = record.get("intervention")
            if step is None:
                lines.append(f"- Golden observation {i}: props={props}, freq={freq}")
            else:
                lines.append(
                    f"- Golden intervention {i}: intervene {step['target_prop']} to "
                    f"{step['target_value']}, observed props={props}, freq={freq}"
                )
    lines += [
        "",
        "How to use the devices: TALK to the Property Manipulator, choose a property by its "
        'option number, then reply with only "value": <number>; ignore the "[Do not select '
        'this option]" entry. TALK to the Crystal Reactor, choose option 1, then reply with '
        '"value": <frequency>. Finish with the manipulator before using the reactor.',
    ]
    return "\n".join(lines)

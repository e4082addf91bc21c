"""The hypothesis of a study: a structural causal model a researcher can read and edit.

A :class:`Hypothesis` holds everything the later steps need and nothing they compute:
the scenario, the agents (:class:`AgentSpec`), the variables (:class:`StudyVariable`) and
how the conversation is run (protocol, order, central agent, statement cap). Variables
are of two kinds:

* **measured** (``role`` ``outcome`` or ``mediator``): realised during a run and read
  afterwards from survey ``questions`` put to an agent or to the ``coordinator``, combined
  across questions by ``aggregation``; a measured variable lists its ``causes``;
* **treatments** (``role`` ``cause``): fixed before the run, varied over ``values``, and
  given to one agent (``scope: individual``) or everyone (``scope: scenario``) as the
  proxy ``attribute``; a ``public`` treatment is also shown to the other agents under
  ``public_name``.

A hypothesis may also declare ``derived`` variables, named expressions over the causes
(:mod:`silicolab.studies.derived`, e.g. the auction's second-highest budget); ``theory``
names the derived variable that is a theory's prediction of the outcome, and
``rule_world`` the registered rule-based world its conditions can run in
(:mod:`silicolab.studies.rule_worlds`), and ``simulation`` a simulation its conditions
run in instead of a conversation (:mod:`silicolab.studies.sim_world_spec`). Nothing
downstream is keyed on ``name``.

Every decision the scientist model took is kept in ``decisions`` with its explanation,
so the record shows why the SCM looks the way it does. The model is strict
(``extra="forbid"``): a typo in an edited file is an error naming the field, not a
silently ignored key.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from silicolab.core.records import SCHEMA_VERSION
from silicolab.scm.variables import LEVELLED_TYPES, VARIABLE_TYPES, VariableType
from silicolab.sim.conversation import PROTOCOLS, Protocol
from silicolab.sim.survey import parse_number
from silicolab.studies.aggregate import AGGREGATIONS, Aggregation
from silicolab.studies.derived import check_names, parse_expression
from silicolab.studies.sim_world_spec import SimulationWorld

COORDINATOR = "coordinator"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _identifier(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(
            f"{value!r} is not a variable name; use lowercase letters, digits and "
            "underscores, starting with a letter (e.g. 'final_price')"
        )
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class FieldProblem(ValueError):
    """A cross-field validation error that knows the field it belongs to (``loc``, e.g.
    ``("derived", 0, "expression")``), so a hypothesis file's error names that field and
    its line rather than the top level."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


class Decision(_Strict):
    """One choice of the scientist model: which step, what it chose, and why."""

    step: str
    value: Any = None
    explanation: str = ""


class Question(_Strict):
    """A post-run survey question and who answers it (an agent's name or ``coordinator``)."""

    addressee: str
    text: str


class AgentSpec(_Strict):
    """A simulated subject: its name, role, goal, constraint and background attributes.

    Treatment values are not listed here; they are added per condition as the attributes
    named by the treatments (see :meth:`Hypothesis.attributes_for`)."""

    name: str
    role: str
    goal: str = ""
    constraint: str = ""
    attributes: dict[str, str] = Field(default_factory=dict)

    @field_validator("name", "role")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


class StudyVariable(_Strict):
    """One variable of the hypothesized SCM (see the module docstring for the two kinds)."""

    name: str
    role: Literal["outcome", "mediator", "cause"]
    type: VariableType
    units: str = ""
    description: str = ""
    operationalization: str = ""
    levels: list[str] = Field(default_factory=list)
    # measured variables
    questions: list[Question] = Field(default_factory=list)
    aggregation: Aggregation = "mean"
    causes: list[str] = Field(default_factory=list)
    # treatments
    values: list[str] = Field(default_factory=list)
    scope: Literal["individual", "scenario"] = "individual"
    agent: str | None = None
    attribute: str = ""
    visibility: Literal["private", "public"] = "private"
    public_name: str = ""

    @property
    def measured(self) -> bool:
        return self.role != "cause"

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        return _identifier(value)

    @model_validator(mode="after")
    def _consistent(self) -> StudyVariable:
        if self.type in LEVELLED_TYPES and self.measured and not self.levels:
            raise ValueError(f"a {self.type} variable needs its levels, lowest first")
        if self.type == "binary" and self.levels and len(self.levels) != 2:
            raise ValueError(f"a binary variable has exactly two levels, got {self.levels}")
        if self.measured:
            if self.values:
                raise ValueError("only causes have treatment values; remove 'values'")
            return self
        self._check_treatment()
        return self

    def _check_treatment(self) -> None:
        if len(self.values) < 2:
            raise ValueError("a cause needs at least two treatment values to vary")
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"treatment values repeat: {self.values}")
        if self.causes or self.questions:
            raise ValueError("a cause is set before the run: it has no causes or questions")
        if not self.attribute.strip():
            raise ValueError("a cause needs the attribute that carries it, e.g. 'your budget'")
        if self.scope == "individual" and not self.agent:
            raise ValueError("an individual-scope cause names the agent it varies ('agent')")
        if self.type in ("continuous", "count"):
            bad = [v for v in self.values if parse_number(v) is None]
            if bad:
                raise ValueError(
                    f"{self.type} treatment values must each state one number; "
                    f"{bad} do not (write e.g. '$1,000' or '2.5')"
                )
        if self.type == "binary" and len(self.values) != 2:
            raise ValueError(f"a binary cause has exactly two values, got {self.values}")
        outside = [v for v in self.values if self.levels and v not in self.levels]
        if outside and self.type in LEVELLED_TYPES:
            raise ValueError(f"treatment values {outside} are not among levels {self.levels}")

    def numeric(self, value: str) -> float | str:
        """The number a treatment value stands for in estimation: the stated number for
        continuous/count, 0/1 for binary, 1..k for ordinal (by position in ``levels`` or
        ``values``); nominal values stay text (dummy-coded downstream)."""
        order = self.levels or self.values
        if self.type in ("continuous", "count"):
            number = parse_number(value)
            assert number is not None  # checked by the validator
            return number
        if self.type == "binary":
            return float(order.index(value))
        if self.type == "ordinal":
            return float(order.index(value) + 1)
        return value


class DerivedVariable(_Strict):
    """A variable computed from the causes by a safe arithmetic ``expression`` (see
    :mod:`silicolab.studies.derived`), e.g. ``second_largest(budget_1, budget_2,
    budget_3)``; the fit tests it as an alternative cause of the outcome."""

    name: str
    expression: str
    description: str = ""

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        return _identifier(value)

    @field_validator("expression")
    @classmethod
    def _parses(cls, value: str) -> str:
        parse_expression(value)
        return value.strip()


class Hypothesis(_Strict):
    """A study's scenario, agents, SCM and protocol (see the module docstring)."""

    schema_version: int = SCHEMA_VERSION
    name: str = "study"
    scenario: str
    agents: list[AgentSpec]
    variables: list[StudyVariable]
    protocol: Protocol = "ordered"
    order: list[str] = Field(default_factory=list)
    central: str | None = None
    max_statements: int = Field(default=20, ge=1, le=200)
    derived: list[DerivedVariable] = Field(default_factory=list)
    theory: str | None = None
    rule_world: str | None = None
    simulation: SimulationWorld | None = None
    decisions: list[Decision] = Field(default_factory=list)

    @field_validator("scenario")
    @classmethod
    def _scenario(cls, value: str) -> str:
        if len(value.strip()) < 10:
            raise ValueError("describe the scenario in at least a sentence")
        return value.strip()

    @model_validator(mode="after")
    def _coherent(self) -> Hypothesis:
        names = [a.name for a in self.agents]
        if len(names) < 2 or len(set(names)) != len(names):
            raise ValueError(f"a study needs two or more agents with distinct names, got {names}")
        if COORDINATOR in names:
            raise ValueError(f"{COORDINATOR!r} is reserved for the coordinator; rename the agent")
        variables = [v.name for v in self.variables]
        if len(set(variables)) != len(variables):
            raise ValueError(f"variable names repeat: {variables}")
        outcomes = [v for v in self.variables if v.role == "outcome"]
        if len(outcomes) != 1:
            raise ValueError(f"exactly one variable has role 'outcome', found {len(outcomes)}")
        if not self.treatments:
            raise ValueError("the SCM needs at least one cause with treatment values")
        self._check_measures()
        for v in self.variables:
            self._check_links(v, set(names), set(variables))
        self._check_acyclic()
        if not self.outcome.causes:
            raise ValueError(f"the outcome {self.outcome.name!r} lists no causes")
        used = {c for v in self.measured for c in v.causes}
        unused = [v.name for v in self.treatments if v.name not in used]
        if unused:
            raise ValueError(f"causes {unused} are not a cause of any measured variable")
        if self.protocol.startswith("central") and self.central not in names:
            raise ValueError(f"protocol {self.protocol} needs 'central' set to one of {names}")
        if self.order and sorted(self.order) != sorted(names):
            raise ValueError(f"'order' must list every agent once: {names}")
        self._check_derived(variables)
        return self

    def _check_measures(self) -> None:
        """Every measured variable is asked or (in a simulation study) measured; the
        simulation section names only this hypothesis' causes and measured variables
        and sets every cause."""
        sim = self.simulation
        measured_in_sim = set(sim.measurements) if sim is not None else set()
        for i, v in enumerate(self.variables):
            if v.measured and not v.questions and v.name not in measured_in_sim:
                hint = " or a simulation measurement" if sim is not None else ""
                raise FieldProblem(
                    ("variables", i, "questions"),
                    f"a measured variable needs at least one survey question{hint}",
                )
        if sim is None:
            return
        causes = {v.name for v in self.treatments}
        measured = {v.name for v in self.measured}
        for name in sim.treatments:
            if name not in causes:
                raise FieldProblem(("simulation", "treatments", name), f"{name!r} is not a cause")
        for name in sim.measurements:
            if name not in measured:
                raise FieldProblem(
                    ("simulation", "measurements", name), f"{name!r} is not a measured variable"
                )
        unset = sorted(causes - set(sim.treatments))
        if unset:
            raise FieldProblem(
                ("simulation", "treatments"),
                f"causes {unset} are not set in the simulation: give each a path",
            )

    def _check_derived(self, variables: list[str]) -> None:
        numeric = [v.name for v in self.treatments if v.type != "nominal"]
        seen: set[str] = set()
        for i, d in enumerate(self.derived):
            if d.name in variables or d.name in seen:
                raise FieldProblem(
                    ("derived", i, "name"),
                    f"{d.name!r} is already the name of a variable or derived variable; "
                    "choose another name",
                )
            seen.add(d.name)
            try:
                check_names(d.expression, numeric)
            except ValueError as exc:
                raise FieldProblem(("derived", i, "expression"), str(exc)) from None
        if self.theory is not None and self.theory not in seen:
            raise FieldProblem(
                ("theory",),
                f"{self.theory!r} is not a derived variable; 'theory' names one of the "
                f"'derived' variables {sorted(seen)} (declare it there first)",
            )

    def _check_acyclic(self) -> None:
        """Refuse causes that go round in a loop (``m`` causes ``y`` and ``y`` causes
        ``m``): estimation regresses each measured variable on its causes, which needs an
        order. The error names the loop and points at the variable whose ``causes`` close
        it."""
        measured = {v.name for v in self.measured}
        if not any(c in measured for v in self.measured for c in v.causes):
            return  # only treatments are causes: no loop is possible
        from silicolab.scm.graph import cycle_text, find_cycle

        cycle = find_cycle((c, v.name) for v in self.variables for c in v.causes)
        if cycle is None:
            return
        cause, effect = cycle[-2], cycle[-1]
        index = next(i for i, v in enumerate(self.variables) if v.name == effect)
        raise FieldProblem(
            ("variables", index, "causes"),
            f"the hypothesis has a cycle: {cycle_text(cycle)}; a structural causal model must "
            f"be acyclic: remove one of these paths (e.g. {cause!r} from the causes of "
            f"{effect!r})",
        )

    def _check_links(self, v: StudyVariable, agents: set[str], variables: set[str]) -> None:
        if v.agent is not None and v.agent not in agents:
            raise ValueError(f"{v.name}: agent {v.agent!r} is not one of the agents {agents}")
        for q in v.questions:
            if q.addressee != COORDINATOR and q.addressee not in agents:
                raise ValueError(
                    f"{v.name}: question addressee {q.addressee!r} is neither an agent nor "
                    f"{COORDINATOR!r}"
                )
        for cause in v.causes:
            if cause not in variables or cause == v.name:
                raise ValueError(f"{v.name}: cause {cause!r} is not another variable")

    # -- views ---------------------------------------------------------------------------

    @property
    def outcome(self) -> StudyVariable:
        return next(v for v in self.variables if v.role == "outcome")

    @property
    def treatments(self) -> list[StudyVariable]:
        return [v for v in self.variables if v.role == "cause"]

    @property
    def measured(self) -> list[StudyVariable]:
        return [v for v in self.variables if v.measured]

    def variable(self, name: str) -> StudyVariable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    def equations(self) -> dict[str, list[str]]:
        """``{measured variable: its causes}`` for estimation (mediators first)."""
        order = [v for v in self.measured if v.role == "mediator"] + [self.outcome]
        return {v.name: list(v.causes) for v in order if v.causes}

    def derived_over(self, names: Any) -> list[DerivedVariable]:
        """The derived variables whose expressions use only ``names`` (e.g. the causes a
        follow-on keeps)."""
        from silicolab.studies.derived import expression_names

        keep = set(names)
        return [d for d in self.derived if set(expression_names(d.expression)) <= keep]

    def attributes_for(self, agent: AgentSpec, treatments: dict[str, str]) -> dict[str, str]:
        """``agent``'s attributes in a condition: its background attributes plus the
        treatment values it carries (its own private ones, public ones under their public
        name, scenario-wide ones)."""
        out = dict(agent.attributes)
        for v in self.treatments:
            value = treatments[v.name]
            if v.scope == "scenario" or v.agent == agent.name:
                out[v.attribute] = value
            elif v.visibility == "public":
                out[v.public_name or f"{v.agent}'s {v.attribute.removeprefix('your ')}"] = value
        return out

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


__all__ = [
    "AGGREGATIONS",
    "COORDINATOR",
    "PROTOCOLS",
    "SCHEMA_VERSION",
    "VARIABLE_TYPES",
    "AgentSpec",
    "Decision",
    "DerivedVariable",
    "FieldProblem",
    "Hypothesis",
    "Question",
    "StudyVariable",
]

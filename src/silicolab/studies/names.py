"""Human first names for a study's agents, as the paper gives its subjects.

With ``agent_names="random"`` every agent of a condition is called by a first name drawn
from :data:`FIRST_NAMES` instead of its id (``buyer``, ``judge``): a model that reads
"Maria (the buyer)" plays a person rather than a label. The draw is seeded by the study's
seed and the condition's unit id (condition and replicate), so a rerun or a resumed run
gives every agent the same name again, and the names within a condition are distinct.
The hypothesis' agent ids still address the survey questions; the names are recorded in
the condition's run beside the ids they stand for.
"""

from __future__ import annotations

from collections.abc import Sequence

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng

#: Common given names from many languages: distinct, one word each, none a word a
#: conversation would use otherwise (no "Hope" or "Will").
FIRST_NAMES: tuple[str, ...] = (
    "Aaliyah", "Abdul", "Adebayo", "Aiko", "Alejandro", "Amara", "Amir", "Anders", "Anika",
    "Aroha", "Astrid", "Beatriz", "Bongani", "Bruno", "Camille", "Carlos", "Chidi", "Chloe",
    "Dmitri", "Elena", "Emeka", "Esther", "Fatima", "Felipe", "Freya", "Gabriel", "Greta",
    "Hamid", "Hana", "Hiroshi", "Ibrahim", "Ingrid", "Isabel", "Jamal", "Javier", "Jonas",
    "Kalani", "Kenji", "Kofi", "Lars", "Leila", "Lucia", "Malik", "Margaret", "Mateo",
    "Mei", "Nadia", "Naveen", "Nia", "Oksana", "Olumide", "Omar", "Paolo", "Priya",
    "Quentin", "Rafael", "Rania", "Ravi", "Rosa", "Samuel", "Sana", "Sergei", "Sofia",
    "Tariq", "Thandiwe", "Tomas", "Umar", "Valentina", "Wei", "Xavier", "Yara", "Yusuf",
    "Zainab", "Zoltan",
)  # fmt: skip


def random_names(agent_ids: Sequence[str], *, seed: int, unit_id: str) -> dict[str, str]:
    """A distinct first name for each of ``agent_ids``, drawn with ``seed`` for the run
    ``unit_id`` (same arguments, same names, in any process)."""
    if len(agent_ids) > len(FIRST_NAMES):
        raise InputError(
            f"random agent names: {len(agent_ids)} agents but only {len(FIRST_NAMES)} names; "
            "use agent_names='roles' for this study"
        )
    picked = rng(seed, "agent-names", unit_id).choice(
        len(FIRST_NAMES), size=len(agent_ids), replace=False
    )
    return {agent: FIRST_NAMES[int(i)] for agent, i in zip(agent_ids, picked, strict=True)}


__all__ = ["FIRST_NAMES", "random_names"]

"""The built-in simulation files: one YAML file per world in this folder.

``silicolab sim list`` shows them (name and description); ``silicolab sim run NAME``
runs one; ``silicolab sim run NAME --write FILE`` copies it for editing, and
``silicolab sim run FILE.yaml`` runs the edited copy.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from silicolab.core.errors import InputError
from silicolab.sim.simulation import Simulation

WORLDS_DIR = Path(__file__).parent


def world_names() -> list[str]:
    """The built-in worlds, by name."""
    return sorted(p.stem for p in WORLDS_DIR.glob("*.yaml"))


def world_text(name: str) -> str:
    """The YAML text of the built-in world ``name``."""
    path = WORLDS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise InputError(
            f"unknown simulation {name!r} (simulation=); built-in worlds: "
            f"{', '.join(world_names())}, or give a simulation file (.yaml)",
            params=("simulation",),
        )
    return path.read_text(encoding="utf-8")


def list_worlds() -> list[dict[str, str]]:
    """``{"name", "description", "game_master"}`` of every built-in world."""
    rows = []
    for name in world_names():
        data = yaml.safe_load(world_text(name)) or {}
        gm = (data.get("game_master") or {}).get("prefab", "generic")
        rows.append({"name": name, "description": data.get("description", ""), "game_master": gm})
    return rows


def load_world(simulation: str | Path | Simulation) -> Simulation:
    """A :class:`Simulation` from a built-in world's name, a ``.yaml``/``.yml`` file or a
    simulation value (returned as is)."""
    if isinstance(simulation, Simulation):
        return simulation
    text = str(simulation)
    if text.endswith((".yaml", ".yml")) or Path(text).is_file():
        return Simulation.load(text)
    return Simulation.from_yaml(world_text(text), f"{text}.yaml")


def write_world(name: str, path: str | Path, *, force: bool = False) -> Path:
    """Copy the built-in world ``name`` to ``path`` for editing; an existing different
    file is kept unless ``force``."""
    from silicolab.core.files import atomic_write_text

    text = world_text(name)
    path = Path(path)
    if path.is_dir():
        path = path / f"{name}.yaml"
    if path.exists() and not force:
        try:
            same = path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            raise InputError(
                f"{path} exists and differs from the {name} world; nothing was written: "
                "add force=True to overwrite it, or name another file",
                params=("force",),
            )
    try:
        return atomic_write_text(path, text)
    except OSError as exc:
        raise InputError(
            f"cannot write {path} ({exc.strerror or exc}); choose a path you can write to"
        ) from None

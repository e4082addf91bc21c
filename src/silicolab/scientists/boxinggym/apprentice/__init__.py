"""Box's Apprentice for BoxingGym: an LLM statistician writes PyMC programs for the data
gathered so far, the sandbox fits and scores them, a critic compares them with the data,
and the best program guides the scientist and answers its evaluation questions (spec §14).

Modules: :mod:`.frames` (the data tables with the published columns), :mod:`.execute`
(sandboxed fits), :mod:`.score` (PSIS-LOO selection), :mod:`.proposal` (prompts and the
repair loop), :mod:`.critic`, :mod:`.statistician` (the loop and the scientist) and
:mod:`.reference_statistician` (the environment's true model family, no LLM). PyMC and
arviz are imported only inside the sandbox: install ``silicolab[ppl]``.
"""

from __future__ import annotations

from silicolab.scientists.boxinggym.apprentice.execute import (
    FitSettings,
    ProgramRun,
    require_ppl,
    run_program,
)
from silicolab.scientists.boxinggym.apprentice.statistician import (
    ApprenticeScientist,
    Discovery,
    Statistician,
)

__all__ = [
    "ApprenticeScientist",
    "Discovery",
    "FitSettings",
    "ProgramRun",
    "Statistician",
    "require_ppl",
    "run_program",
]

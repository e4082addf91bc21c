"""Small shared helpers every silicolab layer may use: errors, seeding, files, secrets."""

from silicolab.core.errors import (
    ConfigError,
    InputError,
    LLMError,
    ParseFailure,
    SilicolabError,
)

__all__ = ["ConfigError", "InputError", "LLMError", "ParseFailure", "SilicolabError"]

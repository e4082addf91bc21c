"""silicolab: an in-silico laboratory for causal science with language-model agents."""

__version__ = "0.1.0"

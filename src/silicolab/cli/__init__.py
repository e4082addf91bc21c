"""The ``silicolab`` command line (typer). Heavy libraries load inside commands only."""

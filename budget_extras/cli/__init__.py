"""The ``budget-extras`` command line: one module per subcommand (``_<name>.py`` with ``register``)."""

from ._main import main

__all__ = ["main"]

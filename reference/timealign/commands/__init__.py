"""The commands layer (ARCHITECTURE.md): every sub-command of ``timealign`` and the options
of every ``python -m`` entry point, in one package on top of the adapters.

A module here parses options, calls a library (the core, an algorithm through the registry,
an adapter) and maps failures to exit codes through :func:`timealign.command.guarded`; no
library module imports this package back. :mod:`timealign.commands.main` builds the
parser (``timealign.cli:main`` is its console-script name); each other module adds the
sub-commands of one adapter (``register``) and imports its heavy dependencies (pyspark,
matplotlib, Hypothesis) only when run, so ``timealign check`` works where Spark is not
installed. :mod:`timealign.commands.run_input` holds the options that name a run's input,
shared by ``run``, ``stream``, ``verify`` and ``plot``.
"""

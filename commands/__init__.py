"""The ``vine`` command line: one subcommand per engine call, JSON for scripts, rich
output for people. Entry point: :func:`monkeyllm.commands.main.main`."""

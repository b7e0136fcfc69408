"""The command line: one module per subcommand, thin over the services below.

The entry point is :func:`worldspec.cli.main.main`; :mod:`worldspec.cli.console`
holds what every subcommand shares (exit statuses, the console, spec paths).
"""

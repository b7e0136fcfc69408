"""WorldSpec surface language: grammar, syntax tree, parser, formatter, diagnostics."""

"""A package whose environment class imports its helpers relatively (the sandbox tests)."""

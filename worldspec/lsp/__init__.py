"""The WorldSpec language server (``worldspec lsp``): the compiler in the editor.

One floor above the compiler, like the other front ends: it reads the public parse and
check APIs and turns what they learn into LSP answers.

- :mod:`worldspec.lsp.loading`: one document and its imports as a checked unit, with parsed
  imports cached and the editor's unsaved buffers preferred over the disk;
- :mod:`worldspec.lsp.analysis`: one analysis per document version, resilient to syntax
  errors (a broken declaration is blanked out so the rest keeps its types);
- :mod:`worldspec.lsp.index`: every definition and reference of a unit, with scopes;
- :mod:`worldspec.lsp.features`: hover, completion, rename and quick fixes over the index;
- :mod:`worldspec.lsp.server`: the pygls wiring (stdio).

pygls is an optional extra (the ``lsp`` extra); only the server imports it.
"""

from __future__ import annotations

__all__: list[str] = []

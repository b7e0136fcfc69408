# ruff: noqa  (a specimen of code found in the wild, kept in its own style)
"""An in-memory shell over a tree of folder and document nodes, in the style of the file-system
APIs of agent benchmarks: node objects linked to their parents, a current folder, and tools
named after shell commands. Results are plain dicts; bad input raises or returns an "error"."""

from typing import Dict, List, Optional, Union


class Document:
    """A file: a name and its text."""

    def __init__(self, name: str, text: str = "") -> None:
        self.name = name
        self.text = text

    def __repr__(self) -> str:
        return f"Document({self.name!r}, {len(self.text)} chars)"


class Folder:
    """A directory: named entries (documents or folders) and a link to its parent."""

    def __init__(self, name: str, parent: Optional["Folder"] = None) -> None:
        self.name = name
        self.parent = parent
        self.entries: Dict[str, Union["Folder", Document]] = {}

    def path(self) -> str:
        parts: List[str] = []
        node: Optional[Folder] = self
        while node is not None and node.parent is not None:
            parts.append(node.name)
            node = node.parent
        return "/" + "/".join(reversed(parts))

    def __repr__(self) -> str:
        return f"Folder({self.path()!r}, {sorted(self.entries)!r})"


def _build(name: str, spec: dict, parent: Optional[Folder]) -> Folder:
    folder = Folder(name, parent)
    for entry, value in spec.items():
        if isinstance(value, dict):
            folder.entries[entry] = _build(entry, value, folder)
        else:
            folder.entries[entry] = Document(entry, str(value))
    return folder


class ShellFS:
    """A file system shell: a folder tree, the current folder, and shell-like tools."""

    def __init__(self) -> None:
        self.root = Folder("")
        self._cwd = self.root
        self.cwd_path = "/"

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        self.root = _build("", scenario.get("tree", {}), None)
        self._cwd = self.root
        for part in scenario.get("cwd", "/").strip("/").split("/"):
            if part:
                self._cwd = self._cwd.entries[part]  # type: ignore[assignment]
        self.cwd_path = self._cwd.path()

    def _resolve(self, path: str) -> Union[Folder, Document, None]:
        node: Union[Folder, Document] = self.root if path.startswith("/") else self._cwd
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if not isinstance(node, Folder):
                return None
            if part == "..":
                node = node.parent or node
                continue
            found = node.entries.get(part)
            if found is None:
                return None
            node = found
        return node

    def pwd(self) -> Dict[str, str]:
        """Print the current folder's path."""
        return {"current_working_directory": self.cwd_path}

    def cd(self, folder: str) -> Dict[str, str]:
        """Change the current folder.

        Args:
            folder (str): A path, absolute or relative; ".." goes up one level.
        """
        node = self._resolve(folder)
        if node is None:
            return {"error": f"cd: {folder}: No such file or directory"}
        if not isinstance(node, Folder):
            return {"error": f"cd: {folder}: Not a directory"}
        self._cwd = node
        self.cwd_path = node.path()
        return {"current_working_directory": self.cwd_path}

    def ls(self, a: bool = False) -> Dict[str, List[str]]:
        """List the current folder's entries, folders with a trailing slash.

        Args:
            a (bool): Also list hidden entries (names starting with a dot).
        """
        names = []
        for name, node in self._cwd.entries.items():
            if name.startswith(".") and not a:
                continue
            names.append(name + "/" if isinstance(node, Folder) else name)
        return {"current_directory_content": names}

    def mkdir(self, dir_name: str) -> Optional[Dict[str, str]]:
        """Make a folder in the current folder.

        Args:
            dir_name (str): The new folder's name (no slashes).
        """
        if "/" in dir_name or dir_name in ("", ".", ".."):
            raise ValueError(f"mkdir: invalid name '{dir_name}'")
        if dir_name in self._cwd.entries:
            return {"error": f"mkdir: cannot create directory '{dir_name}': File exists"}
        self._cwd.entries[dir_name] = Folder(dir_name, self._cwd)
        return None

    def touch(self, file_name: str) -> Optional[Dict[str, str]]:
        """Make an empty document in the current folder, unless one of that name exists.

        Args:
            file_name (str): The document's name (no slashes).
        """
        if "/" in file_name or file_name in ("", ".", ".."):
            raise ValueError(f"touch: invalid name '{file_name}'")
        if isinstance(self._cwd.entries.get(file_name), Folder):
            return {"error": f"touch: '{file_name}' is a directory"}
        self._cwd.entries.setdefault(file_name, Document(file_name))
        return None

    def echo(self, content: str, file_name: Optional[str] = None) -> Dict[str, Optional[str]]:
        """Write text to a document of the current folder (made if missing), or just echo it.

        Args:
            content (str): The text.
            file_name (str): The document to write; the text is only returned when left out.
        """
        if file_name is None:
            return {"terminal_output": content}
        node = self._cwd.entries.get(file_name)
        if isinstance(node, Folder):
            return {"error": f"echo: '{file_name}' is a directory"}
        if node is None:
            node = self._cwd.entries[file_name] = Document(file_name)
        node.text = content
        return {"terminal_output": None}

    def cat(self, file_name: str) -> Dict[str, str]:
        """Show a document's text.

        Args:
            file_name (str): A path to the document.
        """
        node = self._resolve(file_name)
        if node is None:
            return {"error": f"cat: {file_name}: No such file or directory"}
        if isinstance(node, Folder):
            return {"error": f"cat: {file_name}: Is a directory"}
        return {"file_content": node.text}

    def rm(self, file_name: str) -> Dict[str, str]:
        """Remove an entry of the current folder (a folder only when it is empty).

        Args:
            file_name (str): The entry's name.
        """
        node = self._cwd.entries.get(file_name)
        if node is None:
            return {"error": f"rm: cannot remove '{file_name}': No such file or directory"}
        if isinstance(node, Folder) and node.entries:
            return {"error": f"rm: cannot remove '{file_name}': Directory not empty"}
        del self._cwd.entries[file_name]
        return {"result": f"Successfully removed {file_name}"}

    def mv(self, source: str, destination: str) -> Dict[str, str]:
        """Move or rename an entry of the current folder; into a folder when the destination is one.

        Args:
            source (str): The entry's name in the current folder.
            destination (str): A new name, or the path of a folder to move it into.
        """
        node = self._cwd.entries.get(source)
        if node is None:
            return {"error": f"mv: cannot stat '{source}': No such file or directory"}
        target = self._resolve(destination)
        if isinstance(target, Folder):
            if target is node:
                return {"error": f"mv: cannot move '{source}' to a subdirectory of itself"}
            if source in target.entries:
                return {"error": f"mv: '{destination}/{source}' already exists"}
            del self._cwd.entries[source]
            target.entries[source] = node
            if isinstance(node, Folder):
                node.parent = target
            return {"result": f"{source} moved to {target.path()}"}
        if target is not None or "/" in destination:
            return {"error": f"mv: cannot move '{source}' to '{destination}'"}
        del self._cwd.entries[source]
        node.name = destination
        self._cwd.entries[destination] = node
        return {"result": f"{source} renamed to {destination}"}

    def find(self, name: str = "") -> Dict[str, List[str]]:
        """List the paths under the current folder whose entry name contains a text.

        Args:
            name (str): The text to look for; every entry when empty.
        """
        found: List[str] = []

        def walk(folder: Folder, prefix: str) -> None:
            for entry, node in folder.entries.items():
                path = f"{prefix}/{entry}"
                if name in entry:
                    found.append(path)
                if isinstance(node, Folder):
                    walk(node, path)

        walk(self._cwd, ".")
        return {"matches": found}

    def wc(self, file_name: str) -> Dict[str, int]:
        """Count the lines, words and characters of a document of the current folder.

        Args:
            file_name (str): The document's name.
        """
        node = self._cwd.entries[file_name]  # a KeyError for a missing name, as written
        if isinstance(node, Folder):
            raise IsADirectoryError(file_name)
        return {"lines": len(node.text.splitlines()), "words": len(node.text.split()),
                "characters": len(node.text)}

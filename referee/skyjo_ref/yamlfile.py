"""YAML config files that know the line of every key, so every error can say ``file:line: key: problem``.

Shared by the referee's config (``serve --config``) and the tournament config:
both report mistakes as one line citing where they are, never pyyaml's dump.
"""

from __future__ import annotations

from typing import Any

import yaml

from skyjo_ref.errors import UsageError

#: A key path in a document: ``("bots", 2, "command")`` is ``bots[2].command``.
KeyPath = tuple[str | int, ...]


class YamlFileError(UsageError):
    """Text that is not one valid YAML document (or repeats a key); the message is one line with the place."""


def dotted(path: KeyPath) -> str:
    """``("bots", 2, "command")`` -> ``bots[2].command``; ``()`` -> ``(top level)``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def line_of(lines: dict[KeyPath, int], path: KeyPath) -> int | None:
    """The line of ``path``, or of its nearest parent that has one."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path)


def load_yaml(text: str, source: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse one YAML document; return the data and the line (1-based) of every key path."""
    loader = yaml.SafeLoader(text)
    lines: dict[KeyPath, int] = {}
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lines

        def walk(node: yaml.Node, path: KeyPath) -> None:
            lines.setdefault(path, node.start_mark.line + 1)
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, value_node in node.value:
                    key = loader.construct_object(key_node, deep=True)
                    line = key_node.start_mark.line + 1
                    if isinstance(key, str | int) and key in seen:
                        raise YamlFileError(
                            f"{source}:{line}: {dotted((*path, key))}: duplicate key {key!r} "
                            f"(first on line {seen[key]}): give each key once"
                        )
                    if isinstance(key, str | int):
                        seen[key] = line
                        lines[(*path, key)] = line
                        walk(value_node, (*path, key))
            elif isinstance(node, yaml.SequenceNode):
                for index, item in enumerate(node.value):
                    lines[(*path, index)] = item.start_mark.line + 1
                    walk(item, (*path, index))

        walk(node, ())
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlFileError(f"{where}: not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    return data, lines

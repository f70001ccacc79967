"""How big a YAML document may grow once its aliases are expanded.

An alias (``*a``) repeats what its anchor (``&a``) names without copying it, so
nine levels of ten aliases each (the "billion laughs") is a 1 KB file whose
data, once walked, validated or dumped as JSON, is a billion items: a YAML bomb
in the config hung `vq status`. vq reads YAML in four places (the
config, the config cache's source, Markdown frontmatter, `vq vault` edits with
ruamel) and every one of them calls ``check`` first. It measures the document on
its node graph, where each node is visited once however often it is repeated,
and refuses one that would expand past ``limit`` (or refers to itself).
"""

from __future__ import annotations

from typing import Any

MIN_BUDGET = 1_000_000  # expanded weight always allowed: scalars count their characters


class TooExpanded(ValueError):
    """``str(exc)`` says why, in words fit for a one-line error."""


def limit(text: str) -> int:
    """A document may expand to twice its own size plus ``MIN_BUDGET``."""
    return MIN_BUDGET + 2 * len(text)


def check(text: str) -> None:
    """Raise ``TooExpanded`` for a bomb; yaml's own errors for malformed text.

    Text without ``*`` has no alias and costs nothing more to check."""
    if "*" not in text:
        return
    import yaml

    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except RecursionError:
        raise TooExpanded("nested too deeply") from None
    budget = limit(text)
    sizes: dict[int, int] = {}
    for node in nodes:
        if node is not None:
            _size(node, sizes, set(), budget)


def _size(node: Any, sizes: dict[int, int], path: set[int], budget: int) -> int:
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in path:
        raise TooExpanded("an alias refers to the node that contains it")
    path.add(key)
    value = node.value
    if isinstance(value, str):
        total = 1 + len(value)
    else:
        children = [c for pair in value for c in pair] if value and isinstance(
            value[0], tuple) else value
        try:
            total = 1 + sum(_size(c, sizes, path, budget) for c in children)
        except RecursionError:
            raise TooExpanded("nested too deeply") from None
    path.discard(key)
    if total > budget:
        raise TooExpanded(f"its aliases expand it past {budget} characters (a YAML bomb?); "
                          "write the values out instead of repeating anchors")
    sizes[key] = total
    return total

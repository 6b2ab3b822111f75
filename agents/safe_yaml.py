"""Reading a user's YAML config without surprises: size cap, UTF-8 text only, no alias bombs.

`yaml.safe_load` shares aliased nodes, so a "billion laughs" file loads quickly and only
explodes later, when validation or a JSON dump walks it. `load_yaml_file` counts the nodes the
document would expand to (memoised per node, so counting is cheap) and refuses a file past
`MAX_NODES` before anything walks it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MAX_BYTES = 4 * 1024 * 1024  # a scenario is a few KB; populations come from their own files
MAX_NODES = 200_000  # nodes after expanding aliases


class UnsafeYAMLError(ValueError):
    """The file is not a config we will read (too big, binary, empty, alias bomb, bad YAML)."""


def _expanded_size(node: Any, memo: dict[int, int], depth: int = 0) -> int:
    """Nodes `node` expands to, aliases counted every time they are used."""
    import yaml

    key = id(node)
    if key in memo:
        return memo[key]
    if depth > 200:
        raise UnsafeYAMLError("nesting deeper than 200 levels")
    memo[key] = 1  # a recursive alias counts once instead of looping
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo, depth + 1) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            size += _expanded_size(k, memo, depth + 1) + _expanded_size(v, memo, depth + 1)
    memo[key] = size
    return size


def parse_yaml_text(text: str) -> Any:
    """Parse one YAML document safely; raises UnsafeYAMLError with a one-line reason."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise UnsafeYAMLError("the file is empty (expected a mapping of config fields)")
        size = _expanded_size(node, {})
        if size > MAX_NODES:
            raise UnsafeYAMLError(
                f"expands to {size:,} nodes (limit {MAX_NODES:,}); YAML anchors/aliases "
                "nested like a 'billion laughs' bomb are refused"
            )
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())
        raise UnsafeYAMLError(f"not valid YAML: {first[:300]}") from None
    except RecursionError:
        raise UnsafeYAMLError("nesting too deep") from None
    finally:
        loader.dispose()


def load_yaml_file(path: str | Path) -> Any:
    """Read and parse a config file: at most MAX_BYTES, UTF-8 text, one safe document."""
    source = Path(path)
    try:
        size = source.stat().st_size
        if not source.is_file():
            raise UnsafeYAMLError("not a regular file")
        if size > MAX_BYTES:
            raise UnsafeYAMLError(f"{size:,} bytes is over the {MAX_BYTES:,}-byte limit")
        data = source.read_bytes()
    except OSError as exc:
        raise UnsafeYAMLError(exc.strerror or str(exc)) from None
    if b"\x00" in data:
        raise UnsafeYAMLError("a binary file, not YAML text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeYAMLError(f"not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise UnsafeYAMLError("the file is empty (expected a mapping of config fields)")
    return parse_yaml_text(text)

"""Checks of the documentation build (an mkdocs hook: `hooks:` in mkdocs.yml).

Every file in docs/snippets/ is code the tests execute; a page shows it by including it
(`--8<-- "docs/snippets/NAME"`). A snippet no page includes is tested but shown nowhere:
the build fails on it, as mkdocs's own validation fails on a page missing from the nav.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

INCLUDE = re.compile(r'^\s*--8<--\s+"([^"]+)"', re.MULTILINE)

_included: set[str] = set()


def on_pre_build(config: Any) -> None:
    _included.clear()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    # The page's source, before pymdownx.snippets replaces the include lines.
    _included.update(INCLUDE.findall(markdown))
    return markdown


def on_post_build(config: Any) -> None:
    root = Path(config.config_file_path).parent
    snippets = root / "docs" / "snippets"
    present = {p.relative_to(root).as_posix() for p in snippets.iterdir() if p.is_file()}
    unused = sorted(present - _included)
    if unused:
        raise PluginError(f"snippets no page includes (tested, but shown nowhere): {unused}")

#!/usr/bin/env python3
"""Fails when a relative markdown link in README.md or docs/**/*.md names a file that does not exist.

Usage: check_links.py SOURCE_DIR. Links to web addresses and mail are not checked (the tests run
offline); an anchor (#section) is dropped and only its file is checked, a link that is only an
anchor is skipped. Links inside fenced code blocks and inline code are not links and are skipped.
"""
import pathlib
import re
import sys

# [text](target) or [text](target "title"); images too. The text may hold backticks.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def links(text):
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            yield number, target


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    pages = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    broken = []
    for page in pages:
        if not page.is_file():
            continue
        for number, target in links(page.read_text(encoding="utf-8")):
            if SCHEME.match(target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if path.startswith("/"):
                broken.append(f"{page.relative_to(root)}:{number}: {target} (absolute; links must be relative)")
            elif not (page.parent / path).exists():
                broken.append(f"{page.relative_to(root)}:{number}: {target} (no such file)")
    for line in broken:
        print(line)
    if broken:
        print(f"{len(broken)} broken links in README.md and docs/")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

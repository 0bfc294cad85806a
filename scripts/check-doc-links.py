#!/usr/bin/env python3
"""Checks the links of README.md and docs/: every relative link names a file that exists, and
every #anchor a heading of that page (GitHub's anchors: lower case, punctuation dropped, spaces
as hyphens). Exit 1 naming each broken link.

Usage: check-doc-links.py [REPOSITORY_ROOT]"""
import glob
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors_of(path):
    anchors, inside_code = set(), False
    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                inside_code = not inside_code
            if inside_code or not line.startswith("#"):
                continue
            heading = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
    return anchors


def main(root):
    broken = []
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"),
                                                                 recursive=True))
    for page in pages:
        with open(page) as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto
            path, _, anchor = target.partition("#")
            file = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = f"{os.path.relpath(page, root)}: ({target})"
            if not os.path.exists(file):
                broken.append(f"{where}: no file {os.path.relpath(file, root)}")
            elif anchor and file.endswith(".md") and anchor not in anchors_of(file):
                broken.append(f"{where}: no heading #{anchor} in {os.path.relpath(file, root)}")
    for line in broken:
        print("check-doc-links: " + line)
    print(f"check-doc-links: {len(pages)} pages, {len(broken)} broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

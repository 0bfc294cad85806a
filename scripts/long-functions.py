#!/usr/bin/env python3
"""Functions longer than a reader can hold: every function in src/, models/ and tests/ (a TEST
body too) over LIMIT lines (default 80), from the first line of its signature to its closing
brace.

  long-functions.py ROOT [LIMIT]    exit 1, listing them, when there is any

A function is found where a line ends in "{" after ")" (and qualifiers, or a constructor's
initialisers) and its statement starts like a declaration: not a control statement, a lambda,
an initialiser or a macro.
"""
import pathlib
import re
import sys

ENDS_A_SIGNATURE = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?"
                              r"(->\s*[\w:<>, ]+\s*)?\{$")
NOT_A_FUNCTION = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|catch|else|do|return|case)\b|"
                            r"^\s*#|^\s*:|\[[^\]]*\]\s*\(|=\s*$|=\s*[\[{(]")
STRING_OR_CHAR = re.compile(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'')


def code_of(line):
    return STRING_OR_CHAR.sub('""', line).split("//")[0]


def statement_start(lines, i):
    """The first line of the statement whose last line is lines[i]."""
    start = i
    while start > 0:
        previous = code_of(lines[start - 1]).strip()
        if not previous or previous.endswith((";", "{", "}", ":")) or previous.startswith("#"):
            break
        start -= 1
    return start


def closing_line(lines, i):
    depth = 0
    for j in range(i, len(lines)):
        code = code_of(lines[j])
        depth += code.count("{") - code.count("}")
        if depth == 0:
            return j
    return len(lines) - 1


def long_functions(path, limit):
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        if not ENDS_A_SIGNATURE.search(code_of(line).rstrip()):
            continue
        start = statement_start(lines, i)
        # A constructor's initialiser list: the signature is the line before the ':'.
        while start > 0 and code_of(lines[start]).strip().startswith(":"):
            start = statement_start(lines, start - 1)
        statement = " ".join(code_of(lines[k]).strip() for k in range(start, i + 1))
        if NOT_A_FUNCTION.search(code_of(lines[start])) or "(" not in statement:
            continue
        length = closing_line(lines, i) - start + 1
        if length > limit:
            found.append((length, start + 1, lines[start].strip()))
    return found


def main():
    root = pathlib.Path(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    problems = []
    for folder in ("src", "models", "tests"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".cpp", ".h"):
                for length, line, text in long_functions(path, limit):
                    problems.append(f"{path.relative_to(root)}:{line}: {length} lines: {text}")
    for problem in problems:
        print("long-functions: " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

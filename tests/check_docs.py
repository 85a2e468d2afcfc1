#!/usr/bin/env python3
"""tests/check_docs.py - the documentation cannot rot silently: README.md and docs/*.md are checked
against the repository and against the nbody they describe.

    check_docs.py NBODY REPO     check REPO's pages against `NBODY --help`; exit 1 listing each problem
    check_docs.py --self-test    feed the checks a small tree with one of each kind of rot, and show
                                 that each is found and nothing else is (the checks' negative control)

What is checked, on every page:
  1. links: every relative link ([text](target), ![alt](target), [name]: target, src="..." and
     href="...") leads to a file or folder inside the repository, and a #fragment names a heading of
     the page it points at (GitHub's anchors);
  2. paths: every repository path a page names in code (`sim/physics/integrator.h`, in an inline code
     span or a code block; a path counts when its first folder is one of the repository's own) exists,
     and no path leaves the repository (`../`);
  3. options: every nbody option a page names is one that `nbody --help` lists. An option is nbody's
     when it follows an nbody command (`nbody`, `build/app/nbody`, `mpirun -np 2 nbody`,
     `scripts/run.sh`, which passes its arguments on) in a code span or code-block line, or when an
     inline code span begins with it (`--exchange direct`); FOREIGN names the few options of other
     programs that the pages mention that way.
docs/benchmarks.md is a dated log of past runs: only its links are checked, since its commands and paths
are those of their day and the log is never rewritten.
"""
import bisect
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

LOG_PAGES = {"docs/benchmarks.md"}
# Options of other programs that the pages name at the start of an inline code span.
FOREIGN = {"--mca": "mpirun (Open MPI)", "--no-tests": "ctest", "--config-settings": "pip"}

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
INLINE_LINK = re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_LINK = re.compile(r"^[ \t]{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?", re.M)
HTML_LINK = re.compile(r"\b(?:src|href)\s*=\s*\"([^\"]+)\"")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
PATH_TOKEN = re.compile(r"^(?:\.\.?/)*[\w.+-]+(?:/[\w.+-]*)+$")
OPTION = re.compile(r"^--([A-Za-z0-9][A-Za-z0-9_-]*)")
HELP_OPTION = re.compile(r"^\s*(?:-\w,)?(--[a-z0-9][a-z0-9-]*)", re.M)


class Page:
    """A markdown page split into prose (with its inline code spans) and code-block lines."""

    def __init__(self, root, relative):
        self.relative = relative
        self.path = os.path.join(root, relative)
        with open(self.path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        self.code_lines = []  # (line number, text) inside fenced blocks
        prose = []            # (line number, text) outside them
        fence = None
        for number, line in enumerate(lines, 1):
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)[0] * len(m.group(1))
            elif fence is not None and m and m.group(1).startswith(fence):
                fence = None
            elif fence is not None:
                self.code_lines.append((number, line))
            else:
                prose.append((number, line))
        self.headings = [m.group(2) for m in (HEADING.match(text) for _, text in prose) if m]
        self.prose = "\n".join(text for _, text in prose)
        self.line_starts, offset = [], 0
        self.line_numbers = [number for number, _ in prose]
        for _, text in prose:
            self.line_starts.append(offset)
            offset += len(text) + 1
        # Inline code spans, and the prose with them blanked out (a link inside code is no link).
        self.spans = [(self.line_of(m.start()), m.group(2)) for m in CODE_SPAN.finditer(self.prose)]
        self.text = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), self.prose)

    def line_of(self, offset):
        return self.line_numbers[bisect.bisect_right(self.line_starts, offset) - 1] if self.line_numbers else 0

    def anchors(self):
        """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats."""
        seen, result = {}, set()
        for title in self.headings:
            title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "").replace("*", "")
            slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            result.add(slug if n == 0 else "%s-%d" % (slug, n))
        return result


def repository_folders(root):
    """The repository's own top-level names: what is there, less what .gitignore ignores at the top."""
    ignored = [".git"]
    gitignore = os.path.join(root, ".gitignore")
    if os.path.exists(gitignore):
        for line in open(gitignore, encoding="utf-8"):
            line = line.strip()
            if line.startswith("/"):
                ignored.append(line.strip("/"))
    return {name for name in os.listdir(root) if not any(fnmatch.fnmatch(name, p) for p in ignored)}


def inside(root, path):
    root = os.path.realpath(root)
    return os.path.commonpath([root, os.path.realpath(path)]) == root


def check_links(root, page, problems):
    found = [(page.line_of(m.start()), m.group(1)) for pattern in (INLINE_LINK, REFERENCE_LINK, HTML_LINK)
             for m in pattern.finditer(page.text)]
    for line, target in found:
        if not target or SCHEME.match(target):
            continue
        path, _, fragment = target.partition("#")
        where = "%s:%d: link %s" % (page.relative, line, target)
        resolved = os.path.normpath(os.path.join(os.path.dirname(page.path), path)) if path else page.path
        if not inside(root, resolved):
            problems.append(where + " leads outside the repository")
        elif not os.path.exists(resolved):
            problems.append(where + " leads to no file")
        elif fragment and resolved.endswith(".md"):
            target_page = Page(root, os.path.relpath(resolved, root))
            if fragment not in target_page.anchors():
                problems.append(where + ": %s has no heading with the anchor #%s" % (target_page.relative, fragment))


def code_contexts(page):
    """(line, text, is_span) of every inline code span and every code-block line (continuations joined)."""
    contexts = [(line, text, True) for line, text in page.spans]
    pending, start = "", 0
    for number, line in page.code_lines:
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        contexts.append((start, pending + line, False))
        pending = ""
    if pending:
        contexts.append((start, pending, False))
    return contexts


def clean(token):
    return token.strip("()[]{},;:'\"")


def check_paths(root, page, problems):
    folders = repository_folders(root)
    for line, text, _ in code_contexts(page):
        for token in text.split():
            token = clean(token)
            if not PATH_TOKEN.match(token):
                continue
            parts = [p for p in token.split("/") if p not in (".", "")]
            where = "%s:%d: path %s" % (page.relative, line, token)
            if parts and parts[0] == "..":
                problems.append(where + " is outside the repository")
            elif parts and parts[0] in folders and not os.path.exists(os.path.join(root, *parts)):
                problems.append(where + " does not exist")


def is_nbody(token):
    return os.path.basename(token) == "nbody" or token.endswith("scripts/run.sh")


def check_options(page, options, problems):
    for line, text, is_span in code_contexts(page):
        for segment in re.split(r"\|\||&&|[|;]", text):
            tokens = segment.split()
            if "#" in [t[:1] for t in tokens]:
                tokens = tokens[:[t[:1] for t in tokens].index("#")]
            ours = next((k + 1 for k, t in enumerate(tokens) if is_nbody(t)), None)
            if ours is None:
                # A span of options alone, in prose: nbody's, unless it is another program's.
                if not (is_span and tokens and tokens[0].startswith("--")):
                    continue
                if OPTION.match(tokens[0]) and "--" + OPTION.match(tokens[0]).group(1) in FOREIGN:
                    continue
                ours = 0
            for token in tokens[ours:]:
                m = OPTION.match(clean(token))
                if m and "--" + m.group(1) not in options:
                    problems.append("%s:%d: option --%s is not one `nbody --help` lists" % (page.relative, line, m.group(1)))


def check(root, options):
    problems = []
    pages = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    for relative in pages:
        page = Page(root, relative)
        check_links(root, page, problems)
        if relative not in LOG_PAGES:
            check_paths(root, page, problems)
            check_options(page, options, problems)
    return pages, problems


def help_options(nbody):
    text = subprocess.run([nbody, "--help"], check=True, stdout=subprocess.PIPE, universal_newlines=True,
                          timeout=60).stdout
    options = set(HELP_OPTION.findall(text))
    if "--bodies" not in options or "--help" not in options:
        sys.exit("check_docs: `%s --help` lists no --bodies or --help; cannot check options" % nbody)
    return options


def self_test():
    """One of each kind of rot in a small tree, and the same things done right beside them."""
    readme = """# Title

A [good link](docs/a.md), [a good anchor](docs/a.md#a-heading-with-code), [an image](docs/pic.png),
[outside](../DESIGN.md), [missing](docs/missing.md), [bad anchor](docs/a.md#no-such-heading),
[a web page](https://example.org/x.md), and `[not a link](nowhere.md)` in code.

[ref]: docs/gone.md

Paths: `core/present.h`, `core/absent.h`, `../shared/DESIGN.md`, `out/run.h5` (not ours), `build/x/y` (ignored).
Options: `--bodies 5`, `--no-such-option`, `--mca btl self` (mpirun's), `ctest --output-on-failure`.

```sh
build/app/nbody --run --steps 3          # --commented-out is not checked
mpirun --hostfile hosts -np 2 build/app/nbody --benchmark \\
  --wrong-after-continuation
[also not a link](nowhere.md)
```
"""
    page_a = "# A heading with `code`\n\nBack to the [readme](../README.md#title).\n"
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "core"))
        os.makedirs(os.path.join(root, "build", "x"))
        for name, text in {"README.md": readme, "docs/a.md": page_a, "docs/pic.png": "", "core/present.h": "",
                           ".gitignore": "/build*/\n", "build/x/y": ""}.items():
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        _, problems = check(root, {"--bodies", "--run", "--steps", "--benchmark", "--help"})
    expected = [
        "README.md:4: link ../DESIGN.md leads outside the repository",
        "README.md:4: link docs/missing.md leads to no file",
        "README.md:4: link docs/a.md#no-such-heading: docs/a.md has no heading with the anchor #no-such-heading",
        "README.md:7: link docs/gone.md leads to no file",
        "README.md:9: path core/absent.h does not exist",
        "README.md:9: path ../shared/DESIGN.md is outside the repository",
        "README.md:10: option --no-such-option is not one `nbody --help` lists",
        "README.md:14: option --wrong-after-continuation is not one `nbody --help` lists",
    ]
    if sorted(problems) != sorted(expected):
        print("check_docs self-test: the checks found")
        print("\n".join("  " + p for p in problems) or "  nothing")
        print("but should have found")
        print("\n".join("  " + p for p in expected))
        return 1
    print("check_docs self-test: each of the %d kinds of rot planted was found, and nothing else" % len(expected))
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    nbody, root = argv[1], argv[2]
    pages, problems = check(root, help_options(nbody))
    if problems:
        print("\n".join(problems))
        print("check_docs: %d problems in %d pages" % (len(problems), len(pages)))
        return 1
    print("check_docs: %d pages: every link, repository path and nbody option they name exists" % len(pages))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""tests/check_sanitize_selection.py BUILD_DIR [REPO] - the ThreadSanitizer pass of scripts/sanitize.sh builds only
the test executables it names, and selects tests by a pattern. A test the pattern matches that lives in an
executable not named would be left out there without a word (an executable not built leaves only a placeholder
test). This lists, in a build with every test (BUILD_DIR), the tests that pass would select, and fails naming each
executable they live in that the pass does not build, and each executable it builds that none of them lives in.
Tests labelled gl are not the pass's (it runs none of them); a GPU test its pattern matches must live in an executable
it builds too, where that executable's CPU half runs."""
import json
import os
import subprocess
import sys


def executable_of(test, build):
    """The test program a CTest test runs: its command's first word, or under mpiexec the program it starts (the
    first word that is a file of the build)."""
    command = test.get('command') or ['?']
    if os.path.basename(command[0]) in ('mpiexec', 'mpirun'):
        root = os.path.realpath(build)
        for word in command[1:]:
            if os.path.isabs(word) and os.path.realpath(word).startswith(root + os.sep):
                return os.path.basename(word)
    return os.path.basename(command[0])


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: check_sanitize_selection.py BUILD_DIR [REPO]')
    build = sys.argv[1]
    repo = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    out = subprocess.run(['bash', os.path.join(repo, 'scripts', 'sanitize.sh'), 'thread', '--selection'],
                         capture_output=True, text=True, check=True).stdout
    selection = dict(line.split('=', 1) for line in out.splitlines() if '=' in line)
    pattern, built = selection['tests'], set(selection['targets'].split())
    ctest = os.environ.get('CTEST_PROGRAM', 'ctest')  # CTest's own, under CTest
    listing = subprocess.run([ctest, '--show-only=json-v1', '-R', pattern, '-LE', 'gl'], cwd=build,
                             capture_output=True, text=True)
    if listing.returncode != 0:
        sys.exit(f'check_sanitize_selection: ctest could not list the tests of {build}: {listing.stderr.strip()}')
    tests = json.loads(listing.stdout)['tests']
    if not tests:
        sys.exit(f'check_sanitize_selection: the pattern {pattern!r} selects no test in {build}')
    where = {}
    for test in tests:
        where.setdefault(executable_of(test, build), []).append(test['name'])
    missing = sorted(set(where) - built)
    # Executables this build has at all (the viewer's only where the viewer is built): those the pass names but
    # that hold none of its tests are stale names.
    everything = json.loads(subprocess.run([ctest, '--show-only=json-v1'], cwd=build, capture_output=True,
                                           text=True, check=True).stdout)['tests']
    present = {executable_of(t, build) for t in everything}
    stale = sorted((built & present) - set(where))
    for executable in missing:
        names = where[executable]
        print(f'check_sanitize_selection: {len(names)} test(s) the thread pass selects live in {executable}, which '
              f'scripts/sanitize.sh thread does not build (so they would not run): {", ".join(names[:5])}')
    for executable in stale:
        print(f'check_sanitize_selection: scripts/sanitize.sh thread builds {executable}, which holds none of the '
              f'tests its pattern selects')
    if missing or stale:
        sys.exit(1)
    print(f'check_sanitize_selection: the {len(tests)} tests the thread pass selects live in the {len(where)} '
          f'executables it builds: {", ".join(sorted(where))}')


if __name__ == '__main__':
    main()

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
import shutil
import subprocess
import sys
import tempfile


def executable_of(test, build):
    """The test program a CTest test runs: its command's first word where that is a file of the build, else (a
    launcher such as mpiexec.openmpi) the first of its words that is, or that a definition names: CMake 4 runs a
    discovered GoogleTest test as `cmake -D TEST_EXECUTABLE=PATH ... -P LaunchTest.cmake`; else its first word."""
    command = test.get('command') or ['?']
    root = os.path.realpath(build)
    for word in command:
        path = word.split('=', 1)[1] if '=' in word and not os.path.isabs(word) else word
        if os.path.isabs(path) and os.path.realpath(path).startswith(root + os.sep) and os.path.isfile(path):
            return os.path.basename(path)
    return os.path.basename(command[0])


def list_tests(build, *selection):
    """ctest --show-only's tests of `build`, listed from a copy of its CTestTestfile.cmake tree: ctest run in the
    build itself would rewrite Testing/Temporary/LastTest.log, the log of the ctest that runs this check. The copies
    include the build's own discovery files (by absolute path), so they list the same tests."""
    ctest = os.environ.get('CTEST_PROGRAM', 'ctest')  # CTest's own, under CTest
    with tempfile.TemporaryDirectory(prefix='sanitize-selection-') as copy:
        for folder, dirs, files in os.walk(build):
            dirs[:] = [d for d in dirs if d not in ('Testing', 'CMakeFiles', '_deps')]
            if 'CTestTestfile.cmake' in files:
                target = os.path.join(copy, os.path.relpath(folder, build))
                os.makedirs(target, exist_ok=True)
                shutil.copy(os.path.join(folder, 'CTestTestfile.cmake'), target)
        listing = subprocess.run([ctest, '--show-only=json-v1', *selection], cwd=copy, capture_output=True, text=True)
    if listing.returncode != 0:
        sys.exit(f'check_sanitize_selection: ctest could not list the tests of {build}: {listing.stderr.strip()}')
    return json.loads(listing.stdout)['tests']


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: check_sanitize_selection.py BUILD_DIR [REPO]')
    build = sys.argv[1]
    repo = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    out = subprocess.run(['bash', os.path.join(repo, 'scripts', 'sanitize.sh'), 'thread', '--selection'],
                         capture_output=True, text=True, check=True).stdout
    selection = dict(line.split('=', 1) for line in out.splitlines() if '=' in line)
    pattern, built = selection['tests'], set(selection['targets'].split())
    tests = list_tests(build, '-R', pattern, '-LE', 'gl')
    if not tests:
        sys.exit(f'check_sanitize_selection: the pattern {pattern!r} selects no test in {build}')
    # The command forms CMake writes differ by version: each must name the same executable (CMake 3's, here, written
    # as CMake 4 writes a discovered test), so the check reads the same on every machine.
    for test in tests:
        first = (test.get('command') or [''])[0]
        if os.path.isabs(first) and os.path.isfile(first) and executable_of(test, build) == os.path.basename(first):
            launched = {'command': ['cmake', '-D', f'TEST_EXECUTABLE={first}', '-D', 'TEST_EXECUTOR=', '-P',
                                    'LaunchTest.cmake']}
            if executable_of(launched, build) != executable_of(test, build):
                sys.exit(f'check_sanitize_selection: {launched["command"]} is not read as running {first}')
            break
    where = {}
    for test in tests:
        where.setdefault(executable_of(test, build), []).append(test['name'])
    missing = sorted(set(where) - built)
    # Executables this build has at all (the viewer's only where the viewer is built): those the pass names but
    # that hold none of its tests are stale names.
    present = {executable_of(t, build) for t in list_tests(build)}
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

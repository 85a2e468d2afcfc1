#!/usr/bin/env python3
"""tools/sass_fingerprint.py - one line per GPU kernel of the CUDA engine: a hash of its machine code
(SASS), its size in bytes and its name without namespaces. Two builds whose lines are equal run the
same instructions, whatever the files, namespaces or commits around them.

    tools/sass_fingerprint.py [BUILD_DIR] [--arch 90] > kernels.txt
    tools/sass_fingerprint.py [BUILD_DIR] --against TREE [--only fast_forces]

With --against, the same translation unit of TREE (a checkout of another commit, e.g. from `git
worktree add` or `git archive`) is compiled with the same flags, and each kernel is compared with
its namesake there: `same`, or the registers of each and how many of their instructions they have
in common, in order (the longest common run shows whether a loop survived a change elsewhere).
A change anywhere in a kernel can reallocate the registers of its hot loop; this says so without a GPU.

Needs only nvcc (no GPU, no cuobjdump): the engine's translation unit is compiled again to a cubin
with the flags CMake recorded in BUILD_DIR/compile_commands.json, and each kernel's .text section
is read from the ELF file.
"""
import argparse, difflib, hashlib, json, os, re, shlex, struct, subprocess, sys, tempfile

INSTRUCTION_BYTES = 16  # every sm_70 and later instruction


def kernel_sections(cubin):
    data = open(cubin, 'rb').read()
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3A)
    sections = [struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize) for i in range(shnum)]
    strtab = sections[shstrndx][4]
    for name, _type, _flags, _addr, offset, size in sections:
        label = data[strtab + name:data.index(b'\0', strtab + name)].decode()
        if label.startswith('.text.'):
            yield label[len('.text.'):], data[offset:offset + size]


def compile_kernels(entry, source, arch, tree=None):
    """{readable name: (code, registers)} for the translation unit `source`, compiled as `entry`
    records it; with `tree`, that tree's copy of it, its include paths pointing there."""
    root = entry['file'][:-len(source)].rstrip('/')
    args = shlex.split(entry['command'])
    keep = []
    skip = False
    for x in args[1:]:
        if skip:
            skip = False
            continue
        if x in ('-o', '-c', '-x'):
            skip = x != '-c'
            continue
        if x.startswith('--generate-code') or x.startswith('-gencode') or x == entry['file'] or x.startswith('-Xcompiler'):
            continue
        keep.append(x.replace(root, os.path.abspath(tree)) if tree else x)
    file = os.path.join(os.path.abspath(tree), source) if tree else entry['file']
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, 'engine.cubin')
        cmd = [args[0], *keep, '-cubin', f'-arch=sm_{arch}', '-Xptxas', '-v', '-x', 'cu', file, '-o', cubin]
        r = subprocess.run(cmd, cwd=entry['directory'], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f'error: compiling {file} failed:\n{r.stderr[-4000:]}')
        registers, current = {}, None
        for line in r.stderr.splitlines():
            m = re.search(r"Compiling entry function '(\S+)'", line)
            if m:
                current = m.group(1)
            m = re.search(r'Used (\d+) registers', line)
            if m and current:
                registers[current] = int(m.group(1))
        kernels = {}
        for mangled, code in kernel_sections(cubin):
            name = subprocess.run(['c++filt', mangled], capture_output=True, text=True).stdout.strip()
            kernels[re.sub(r'nbody::(\w+::)*', '', name)] = (code, registers.get(mangled))
    return kernels


def instructions(code):
    return [code[i:i + INSTRUCTION_BYTES] for i in range(0, len(code), INSTRUCTION_BYTES)]


def compare(here, there, only):
    for name in sorted(set(here) | set(there)):
        if only and not re.search(only, name):
            continue
        if name not in here or name not in there:
            print(f"only {'here' if name in here else 'there'}  {name}")
            continue
        (a, ra), (b, rb) = here[name], there[name]
        if a == b:
            print(f'same  r{ra}  {name}')
            continue
        ia, ib = instructions(a), instructions(b)
        blocks = difflib.SequenceMatcher(None, ia, ib, autojunk=False).get_matching_blocks()
        print(f'diff  r{ra} there r{rb}  {len(ia)} / {len(ib)} instructions, {sum(x.size for x in blocks)} in common '
              f'(longest run {max(x.size for x in blocks)})  {name}')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('build', nargs='?', default='build')
    p.add_argument('--arch', default='90', help='SM architecture to compile for (default 90)')
    p.add_argument('--source', default='sim/engines/cuda_engine.cu', help='translation unit (default the engine)')
    p.add_argument('--against', metavar='TREE', help='compare each kernel with TREE\'s (another checkout)')
    p.add_argument('--only', metavar='REGEX', help='with --against: only the kernels whose names match')
    a = p.parse_args()
    entries = json.load(open(os.path.join(a.build, 'compile_commands.json')))
    entry = next((e for e in entries if e['file'].endswith(a.source)), None)
    if entry is None:
        sys.exit(f'error: {a.source} is not in {a.build}/compile_commands.json (a build with CUDA?)')
    if a.against and not os.path.isfile(os.path.join(a.against, a.source)):
        sys.exit(f'error: --against {a.against}: no {a.source} there (a checkout of this project is needed)')
    here = compile_kernels(entry, a.source, a.arch)
    if a.against:
        compare(here, compile_kernels(entry, a.source, a.arch, a.against), a.only)
        return
    for name, (code, _registers) in sorted(here.items()):
        print(hashlib.sha1(code).hexdigest()[:12], len(code), name)


if __name__ == '__main__':
    main()

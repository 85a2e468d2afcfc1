#!/usr/bin/env python3
"""tools/sass_fingerprint.py - one line per GPU kernel of the CUDA engine: a hash of its machine code
(SASS), its size in bytes and its name without namespaces. Two builds whose lines are equal run the
same instructions, whatever the files, namespaces or commits around them.

    tools/sass_fingerprint.py [BUILD_DIR] [--arch 90] > kernels.txt

Needs only nvcc (no GPU, no cuobjdump): the engine's translation unit is compiled again to a cubin
with the flags CMake recorded in BUILD_DIR/compile_commands.json, and each kernel's .text section
is read from the ELF file.
"""
import argparse, hashlib, json, os, re, shlex, struct, subprocess, sys, tempfile


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


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('build', nargs='?', default='build')
    p.add_argument('--arch', default='90', help='SM architecture to compile for (default 90)')
    p.add_argument('--source', default='sim/engines/cuda_engine.cu', help='translation unit (default the engine)')
    a = p.parse_args()
    entries = json.load(open(os.path.join(a.build, 'compile_commands.json')))
    entry = next((e for e in entries if e['file'].endswith(a.source)), None)
    if entry is None:
        sys.exit(f'error: {a.source} is not in {a.build}/compile_commands.json (a build with CUDA?)')
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
        keep.append(x)
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, 'engine.cubin')
        cmd = [args[0], *keep, '-cubin', f'-arch=sm_{a.arch}', '-x', 'cu', entry['file'], '-o', cubin]
        subprocess.run(cmd, check=True, cwd=entry['directory'])
        rows = []
        for mangled, code in kernel_sections(cubin):
            name = subprocess.run(['c++filt', mangled], capture_output=True, text=True).stdout.strip()
            rows.append((re.sub(r'nbody::(\w+::)*', '', name), hashlib.sha1(code).hexdigest()[:12], len(code)))
    for name, digest, size in sorted(rows):
        print(digest, size, name)


if __name__ == '__main__':
    main()

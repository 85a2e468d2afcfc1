#!/usr/bin/env python3
"""tools/sass_operands.py - the register operands of each hot fp64 loop in a `cuobjdump -sass` listing.

    cuobjdump -sass BINARY | tools/sass_operands.py [--kernel SUBSTRING] [--min-fp64 100]

For each innermost loop (a backward branch whose range holds no other) of each kernel whose name holds SUBSTRING,
with at least --min-fp64 fp64 arithmetic instructions (DFMA, DMUL, DADD; the pipe's other instructions are not
counted): how many there are, how many distinct registers they read from the register file, and how many operands
the operand reuse cache serves (`.reuse`). A register read twice by one instruction (r * r) counts once.
tools/hermite_pair_ceiling.cu measures what those reads cost on the GPU at hand: on an H200 an fp64 fused
multiply-add reading three distinct registers runs at about two thirds of the fp64 rate, and one reading two at the
full rate, as if each fp64 instruction held the pipe for max(2, registers read) cycles where the rate allows 2. The
last figure of a line is that bound for the loop as scheduled: the share of the fp64 rate its fp64 instructions
could reach at best (other instructions' reads, which compete for the same ports, not counted). Another schedule,
with more operands served by the reuse cache, has another bound.
Needs no GPU, only a listing (cuobjdump comes with the CUDA toolkit).
"""
import argparse
import re
import signal
import sys
from collections import Counter

FP64 = ('DFMA', 'DMUL', 'DADD')


def functions(lines):
    name, body = None, []
    for line in lines:
        m = re.search(r'Function : (\S+)', line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = re.search(r'/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(2)))
    if name:
        yield name, body


def opcode(text):
    return re.sub(r'^@!?U?P\w+\s+', '', text).split()[0]


def loop_stats(instructions):
    counts = Counter()
    by_reads = Counter()  # fp64 instructions by registers read from the file
    fp64 = reads = reused = 0
    for text in instructions:
        op = opcode(text)
        counts[op.split('.')[0]] += 1
        if not op.startswith(FP64):
            continue
        fp64 += 1
        operands = re.sub(r'^@!?U?P\w+\s+', '', text).split(None, 1)[1]
        seen = set()
        own = 0
        for register, reuse in re.findall(r'\b(R\d+)(\.reuse)?', operands)[1:]:  # [0] is the destination
            if register in seen:
                continue
            seen.add(register)
            if reuse:
                reused += 1
            else:
                own += 1
        reads += own
        by_reads[own] += 1
    return fp64, reads, reused, by_reads, counts


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--kernel', default='', help='only kernels whose mangled name holds this')
    parser.add_argument('--min-fp64', type=int, default=100, help='skip loops with fewer fp64 instructions')
    args = parser.parse_args()
    found = False
    for name, body in functions(sys.stdin):
        if args.kernel not in name:
            continue
        loops = set()
        for address, text in body:
            m = re.search(r'\bBRA\b.*?0x([0-9a-f]+)', text)
            if m and int(m.group(1), 16) < address:
                loops.add((int(m.group(1), 16), address))
        # Innermost only: an outer loop's figures would count its inner loops' instructions once, not as they run.
        innermost = [(b, e) for b, e in loops
                     if not any((b2, e2) != (b, e) and b <= b2 and e2 <= e for b2, e2 in loops)]
        for begin, end in sorted(innermost):
            fp64, reads, reused, by_reads, counts = loop_stats([t for a, t in body if begin <= a <= end])
            if fp64 < args.min_fp64:
                continue
            found = True
            cycles = sum(max(2, r) * n for r, n in by_reads.items())
            spread = ', '.join(f'{n} read {r}' for r, n in sorted(by_reads.items()))
            print(f'{name}\n  loop {begin:#x}-{end:#x}: {fp64} fp64 instructions ({spread}), {reads} register reads '
                  f'({reads / fp64:.2f} an instruction), {reused} served by the reuse cache; '
                  f'LDS {counts["LDS"]}, MUFU {counts["MUFU"]}; '
                  f'at best {100 * 2 * fp64 / cycles:.1f}% of the fp64 rate')
    if not found:
        sys.exit(f'sass_operands.py: no loop with {args.min_fp64} or more fp64 instructions in kernels matching '
                 f'"{args.kernel}"')


if __name__ == '__main__':
    main()

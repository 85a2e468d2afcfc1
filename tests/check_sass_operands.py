#!/usr/bin/env python3
"""tests/check_sass_operands.py - tools/sass_operands.py on a small listing written here, whose counts are known:
each instruction's distinct registers, a register read twice counted once, the reuse cache's operands, uniform
registers and RZ not read from the file, only innermost loops (backward branches around no other) with enough fp64
instructions, and the bound max(2, reads) cycles an instruction gives."""
import os
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools', 'sass_operands.py')

LISTING = """
\tcode for sm_90
\t\tFunction : _Z4pairPd
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   LDS.128 R4, [R2] ;
        /*0020*/                   DADD R8, -R4, UR6 ;
        /*0030*/                   DFMA R10, R8, R8, c[0x0][0x210] ;
        /*0040*/                   DFMA R12, R14.reuse, R16, R18 ;
        /*0050*/                   DFMA R20, R14, R22, R24 ;
        /*0060*/                   DMUL R26, R28, R30 ;
        /*0070*/                   MUFU.RSQ64H R31, R11 ;
        /*0080*/                   DADD R32, RZ, -R34 ;
        /*0090*/              @!P0 BRA 0x10 ;
        /*00a0*/                   DADD R40, R42, R44 ;
        /*00b0*/              @!P1 BRA 0x0 ;
        /*00c0*/                   EXIT ;
\t\tFunction : _Z5otherPd
        /*0000*/                   DADD R2, R4, R6 ;
        /*0010*/                   BRA 0x0 ;
"""


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], input=LISTING, capture_output=True, text=True)


def main():
    r = run('--kernel', 'pair', '--min-fp64', '3')
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # DADD -R4,UR6: 1 read; DFMA R8,R8,c: 1; DFMA R14.reuse,R16,R18: 2 (+1 reuse); DFMA R14,R22,R24: 3;
    # DMUL R28,R30: 2; DADD RZ,-R34: 1. The DADD after the branch is outside the loop; the outer loop around both
    # (0x0-0xb0) is not reported.
    expected = ('loop 0x10-0x90: 6 fp64 instructions (3 read 1, 2 read 2, 1 read 3), 10 register reads '
                '(1.67 an instruction), 1 served by the reuse cache; LDS 1, MUFU 1; at best 92.3% of the fp64 rate')
    assert expected in out, out
    assert '_Z5otherPd' not in out, out
    assert 'loop 0x0-0xb0' not in out, out
    r = run('--kernel', 'pair', '--min-fp64', '7')  # the loop has 6: none left
    assert r.returncode != 0 and 'no loop with 7 or more fp64 instructions' in r.stderr, (r.returncode, r.stderr)
    r = run('--min-fp64', '1')  # every kernel: the other one's loop too
    assert '_Z5otherPd' in r.stdout and '1 fp64 instructions (1 read 2)' in r.stdout, r.stdout
    print('check_sass_operands: counts, reuse, uniform registers and loops as expected')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Compiles the code snippets of a Markdown document, so that its examples stay true.

    tools/check_doc_snippets.py DOC --include DIR [--include DIR...] [--cxx C++] [--nvcc NVCC]

Every ```cpp block preceded by a line `<!-- snippet: host NAME -->` is compiled as C++20 with
--cxx (default c++), every one marked `<!-- snippet: cuda NAME -->` with --nvcc for sm_90a
(without --nvcc the CUDA snippets are reported skipped). -c only: nothing is linked or run.
Exit 0 when all compile, 1 when one does not (its errors printed), 2 on a usage error or a
document without snippets.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SNIPPET = re.compile(r'<!-- snippet: (host|cuda) (\S+) -->\s*```cpp\n(.*?)```', re.S)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument('doc')
    ap.add_argument('--include', action='append', default=[], metavar='DIR')
    ap.add_argument('--cxx', default='c++')
    ap.add_argument('--nvcc')
    args = ap.parse_args()
    with open(args.doc) as f:
        snippets = SNIPPET.findall(f.read())
    if not snippets:
        print(f'{args.doc}: no <!-- snippet: host|cuda NAME --> blocks', file=sys.stderr)
        return 2
    includes = [f'-I{d}' for d in args.include]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for kind, name, code in snippets:
            if kind == 'cuda' and not args.nvcc:
                print(f'SKIP {name} (cuda; no --nvcc)')
                continue
            src = os.path.join(tmp, name + ('.cu' if kind == 'cuda' else '.cpp'))
            with open(src, 'w') as f:
                f.write(code)
            if kind == 'cuda':
                cmd = [args.nvcc, '-std=c++20', '-gencode=arch=compute_90a,code=sm_90a']
            else:
                cmd = [args.cxx, '-std=c++20', '-Wall', '-Wextra']
            cmd += includes + ['-c', src, '-o', os.devnull]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0:
                print(f'OK   {name} ({kind})')
            else:
                failed += 1
                print(f'FAIL {name} ({kind}): {" ".join(cmd)}\n{r.stdout}{r.stderr}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())

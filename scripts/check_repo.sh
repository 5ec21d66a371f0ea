#!/usr/bin/env bash
# Repository rules that a compiler cannot check (STYLE.md): inline PTX only in include/tma/ptx/,
# no assert() in the library headers, every public header in docs/api.md, formatting per
# .clang-format where clang-format exists.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
stray=$(git grep -n -E '\basm\b *(volatile)? *\(' -- '*.cu' '*.cuh' '*.hpp' '*.h' '*.cpp' | grep -v '^include/tma/ptx/' || true)
if [ -n "$stray" ]; then echo "inline PTX outside include/tma/ptx/:"; echo "$stray"; fail=1; fi
asserts=$(git grep -n -E '\bassert *\(' -- 'include/*' 'src/*' | grep -v static_assert || true)
if [ -n "$asserts" ]; then echo "assert() in library code (user input must get tma::Error):"; echo "$asserts"; fail=1; fi
# docs/api.md is the API reference: every public header must be in it (by its include path).
undocumented=""
for h in $(git ls-files 'include/*.hpp' 'include/*.cuh'); do
  grep -qF "\`${h#include/}\`" docs/api.md || undocumented="$undocumented ${h#include/}"
done
if [ -n "$undocumented" ]; then
  echo "public headers missing from docs/api.md (add a section or a line for each):$undocumented"
  fail=1
fi
if command -v clang-format >/dev/null; then
  unformatted=""
  for f in $(git ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh'); do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted="$unformatted $f"
  done
  if [ -n "$unformatted" ]; then
    echo "files not formatted with .clang-format (run clang-format -i on them):$unformatted"
    fail=1
  fi
fi
[ $fail -eq 0 ] && echo "repository checks: ok"
exit $fail

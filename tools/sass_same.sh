#!/usr/bin/env bash
# sass_same.sh: whether two builds' GEMM kernels have byte-identical SASS.
#
#   tools/sass_same.sh BASE_BUILD NEW_BUILD [OBJECT...]
#
# Compares cuobjdump -sass of each kernel object (default: the four GEMM kernel translation units
# of tmakit::ops, src/ops/CMakeFiles/tmakit_ops.dir/gemm_kernels*.cu.o) between two build folders,
# headers (file names, tool versions) left out. Prints per object the number of kernels and
# "identical" or the first differing lines. Exit status: 0 all identical, 1 some differ, 2 usage or
# tool error.
#
# Why: a source change meant to leave the kernels as they are (a refactor, a comment, a helper
# moved) is proven so on a machine without a GPU, and then needs no GPU run to keep the
# measurements that the unchanged code already has. Build only the objects to compare, e.g.
#   ninja -C build src/ops/CMakeFiles/tmakit_ops.dir/gemm_kernels_tma.cu.o   (~1-2 min each)
# and the base revision's in a worktree (git worktree add /tmp/base REV).
set -euo pipefail
if [ $# -lt 2 ]; then sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
base=$1 new=$2; shift 2
objs=("$@")
if [ ${#objs[@]} -eq 0 ]; then
  for t in tma tma_plain ordinary ordinary_plain; do
    objs+=("src/ops/CMakeFiles/tmakit_ops.dir/gemm_kernels_$t.cu.o")
  done
fi
# shellcheck source=tools/find_tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/find_tool.sh"
dump=$(require_cuobjdump sass_same.sh) || exit 2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sass() {  # the SASS text without the per-file headers
  "$dump" -sass "$1" | grep -v -E '^Fatbin|^=+$|^[[:space:]]*(arch|code version|host|compile_size|producer|identifier) = '
}
rc=0
for o in "${objs[@]}"; do
  for side in base new; do
    f=${!side}/$o
    if [ ! -f "$f" ]; then echo "sass_same.sh: $f not found" >&2; exit 2; fi
    sass "$f" >"$tmp/$side.txt" || { echo "sass_same.sh: cuobjdump failed on $f" >&2; exit 2; }
  done
  n=$(grep -c 'Function :' "$tmp/base.txt" || true)
  if [ "$n" -eq 0 ]; then echo "sass_same.sh: no kernels in $base/$o" >&2; exit 2; fi
  if cmp -s "$tmp/base.txt" "$tmp/new.txt"; then
    printf '%-60s %3d kernels, SASS identical\n' "$(basename "$o")" "$n"
  else
    printf '%-60s %3d kernels, SASS DIFFERS:\n' "$(basename "$o")" "$n"
    diff "$tmp/base.txt" "$tmp/new.txt" | head -8 || true
    rc=1
  fi
done
exit $rc

#!/usr/bin/env bash
# check_sass.sh: reads the SASS of CUDA binaries and fails when a kernel uses local memory
# (LDL / STL instructions, a stack frame, spilled registers) or when a required opcode is missing.
#
#   tools/check_sass.sh [--require OPCODE]... [--function REGEX] [--allow-local REGEX] BINARY...
#
#   --require OPCODE     every BINARY must contain OPCODE (in the checked functions): an exact
#                        opcode or a prefix up to a dot, e.g. UTMALDG matches UTMALDG.2D.MULTICAST
#   --function REGEX     check only functions whose (demangled) name matches the extended regex
#   --allow-local REGEX  functions matching it may use local memory (e.g. a debug build's
#                        printf-and-trap helpers: 'tma::detail::(device_fail|report_hang)')
#   --order FIRST,THEN   in every checked function the first FIRST instruction comes before the
#                        first THEN one, both present (opcodes matched as by --require): code layout
#   --none-before OP,OTHER,N  in every checked function no OTHER instruction among the N before
#                        any OP one, and OP present (matched as by --require); e.g.
#                        HGMMA,R2UR,8: the wgmma descriptors are not moved from vector registers
#                        into uniform ones right before each wgmma (they live in uniform ones)
#   --quiet              print only failures and the verdict
#
# Prints a table per function (registers, stack, local bytes, LDL/STL count, TMA opcodes), then
# PASS or FAIL with the reasons. Exit status: 0 pass, 1 fail, 2 usage or tool error.
#
# Why: local memory in a TMA kernel is almost always an accident (a coordinate array indexed at run
# time, a descriptor copied by value, a register budget too small) and costs more than the copy it
# feeds. The opcodes confirm the PTX became the hardware instruction: UTMALDG (tensor load),
# UTMASTG (tensor store), UTMAREDG (reduce), UTMAPF (tensor L2 prefetch), UTMACCTL (descriptor
# prefetch / invalidate), UBLKCP / UBLKPF (bulk copy / prefetch), SYNCS.* (mbarrier), HGMMA (wgmma).
#
# Needs cuobjdump (CUDA toolkit; $CUOBJDUMP, PATH, $CUDA_HOME/bin or /usr/local/cuda/bin) and
# c++filt or cu++filt for readable names (optional).
set -euo pipefail

usage() {
  sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

requires=()
orders=()
nones=()
function_re=''
allow_local_re=''
quiet=0
binaries=()
while (($#)); do
  case "$1" in
    --require) [[ $# -ge 2 ]] || usage; requires+=("$2"); shift 2 ;;
    --function) [[ $# -ge 2 ]] || usage; function_re="$2"; shift 2 ;;
    --allow-local) [[ $# -ge 2 ]] || usage; allow_local_re="$2"; shift 2 ;;
    --order) [[ $# -ge 2 && "$2" == ?*,?* ]] || usage; orders+=("$2"); shift 2 ;;
    --none-before)
      [[ $# -ge 2 && "$2" =~ ^[^,]+,[^,]+,[1-9][0-9]*$ ]] || usage
      nones+=("$2"); shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h | --help) usage ;;
    --*) echo "check_sass.sh: unknown option $1" >&2; usage ;;
    *) binaries+=("$1"); shift ;;
  esac
done
((${#binaries[@]})) || usage

# shellcheck source=tools/find_tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/find_tool.sh"

cuobjdump=$(require_cuobjdump check_sass.sh) || exit 2
demangler=$(find_tool cu++filt)
[[ -n "$demangler" ]] || demangler=$(find_tool c++filt)
demangle() { if [[ -n "$demangler" ]]; then "$demangler"; else cat; fi; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

for bin in "${binaries[@]}"; do
  if [[ ! -f "$bin" ]]; then
    echo "check_sass.sh: no such file: $bin" >&2
    exit 2
  fi
  if ! "$cuobjdump" --dump-sass "$bin" >"$tmp/sass.txt" 2>"$tmp/err.txt"; then
    echo "check_sass.sh: cuobjdump --dump-sass $bin failed: $(cat "$tmp/err.txt")" >&2
    exit 2
  fi
  "$cuobjdump" -res-usage "$bin" >"$tmp/res.txt" 2>"$tmp/err.txt" || {
    echo "check_sass.sh: cuobjdump -res-usage $bin failed: $(cat "$tmp/err.txt")" >&2
    exit 2
  }
  if ! grep -q 'Function :' "$tmp/sass.txt"; then
    fail "$bin holds no SASS (built only as PTX? build with -gencode=arch=compute_90a,code=sm_90a)"
    continue
  fi

  # One line per function: name <TAB> ldl_stl_count <TAB> opcode opcode ... (all opcodes, with
  # their dot suffixes, one entry per instruction).
  awk '
    /Function : / { if (name != "") print name "\t" lmem "\t" ops; name = $NF; lmem = 0; ops = ""; next }
    /^[ \t]+\/\*[0-9a-f]+\*\/[ \t]+/ {
      line = $0
      sub(/^[ \t]+\/\*[0-9a-f]+\*\/[ \t]+/, "", line)
      sub(/^@!?U?P[0-9T][ \t]+/, "", line)
      split(line, tok, /[ \t;]+/)
      op = tok[1]
      if (op == "") next
      ops = ops " " op
      if (op ~ /^(LDL|STL)(\.|$)/) lmem++
    }
    END { if (name != "") print name "\t" lmem "\t" ops }
  ' "$tmp/sass.txt" >"$tmp/functions.txt"

  # name <TAB> REG <TAB> STACK <TAB> LOCAL from the resource report.
  awk '
    /^ *Function [^:]+:$/ { name = $2; sub(/:$/, "", name); next }
    /REG:/ && name != "" {
      reg = stack = local_ = 0
      for (i = 1; i <= NF; i++) {
        split($i, kv, ":")
        if (kv[1] == "REG") reg = kv[2]
        if (kv[1] == "STACK") stack = kv[2]
        if (kv[1] == "LOCAL") local_ = kv[2]
      }
      print name "\t" reg "\t" stack "\t" local_
      name = ""
    }
  ' "$tmp/res.txt" >"$tmp/res_table.txt"

  ((quiet)) || echo "== $bin"
  ((quiet)) || printf '%-5s %-6s %-6s %-8s %s\n' REG STACK LOCAL LDL/STL "function: TMA opcodes"
  all_ops_file="$tmp/ops_$((RANDOM)).txt"
  : >"$all_ops_file"
  checked=0
  while IFS=$'\t' read -r mangled lmem ops; do
    pretty=$(printf '%s\n' "$mangled" | demangle)
    if [[ -n "$function_re" ]] && ! [[ "$pretty" =~ $function_re || "$mangled" =~ $function_re ]]; then
      continue
    fi
    checked=$((checked + 1))
    read -r reg stack local_ < <(awk -F'\t' -v n="$mangled" '$1 == n { print $2, $3, $4 }' \
      "$tmp/res_table.txt")
    reg=${reg:-?}
    stack=${stack:-0}
    local_=${local_:-0}
    tma_ops=$(printf '%s\n' $ops | grep -E '^(UTMA|UBLK|SYNCS|HGMMA|WARPGROUP)' | sed 's/\..*//' |
      sort | uniq -c |
      awk '{ printf "%s%sx%s", (NR > 1 ? " " : ""), $2, $1 }' || true)
    printf '%s\n' $ops >>"$all_ops_file"
    ((quiet)) || printf '%-5s %-6s %-6s %-8s %s: %s\n' "$reg" "$stack" "$local_" "$lmem" "$pretty" \
      "${tma_ops:-(none)}"
    if [[ "$lmem" != 0 || "$stack" != 0 || "$local_" != 0 ]]; then
      if [[ -n "$allow_local_re" ]] && [[ "$pretty" =~ $allow_local_re || "$mangled" =~ $allow_local_re ]]; then
        ((quiet)) || echo "      (local memory allowed by --allow-local)"
      else
        fail "$bin: $pretty uses local memory: $lmem LDL/STL instructions, stack frame $stack" \
             "bytes, local $local_ bytes (a run-time-indexed array, a spill or a by-value copy" \
             "of a large object; look for LDL/STL in cuobjdump --dump-sass)"
      fi
    fi
    for ord in "${orders[@]}"; do
      first=${ord%%,*} second=${ord#*,}
      at_first=$(printf '%s\n' $ops | grep -nE "^${first//./\\.}(\.|$)" | head -1 | cut -d: -f1 || true)
      at_second=$(printf '%s\n' $ops | grep -nE "^${second//./\\.}(\.|$)" | head -1 | cut -d: -f1 || true)
      if [[ -z "$at_first" || -z "$at_second" ]]; then
        missing=$first
        [[ -n "$at_first" ]] && missing=$second
        fail "$bin: $pretty has no $missing instruction (--order $ord)"
      elif ((at_first > at_second)); then
        fail "$bin: $pretty: its first $first is instruction $at_first, after its first $second" \
             "(instruction $at_second): --order $ord asks for the other layout"
      fi
    done
    for rule in "${nones[@]}"; do
      IFS=, read -r op other window <<<"$rule"
      # The first OP that has OTHER among the `window` instructions before it: "k j" (1-based
      # positions of the OP and of that OTHER), or "none" when OP is missing, or nothing. (awk
      # reads to the end: an early exit would leave printf writing into a closed pipe, which
      # pipefail and set -e turn into a silent exit.)
      hit=$(printf '%s\n' $ops | awk -v op="$op" -v other="$other" -v w="$window" '
        function is(x, o) { return x == o || index(x, o ".") == 1 }
        { a[NR] = $0
          if (is($0, op)) {
            seen = 1
            for (j = NR - w; j < NR && !at; j++) if (j >= 1 && is(a[j], other)) { at = NR; by = j }
          } }
        END { if (!seen) print "none"; else if (at) print at, by }')
      if [[ "$hit" == none ]]; then
        fail "$bin: $pretty has no $op instruction (--none-before $rule)"
      elif [[ -n "$hit" ]]; then
        read -r at_op at_other <<<"$hit"
        fail "$bin: $pretty: instruction $at_other is $other, $((at_op - at_other)) before the" \
             "$op at $at_op (--none-before $rule)"
      fi
    done
  done <"$tmp/functions.txt"

  if ((checked == 0)); then
    fail "$bin: no function matches --function '$function_re'"
    continue
  fi
  for req in "${requires[@]}"; do
    if ! grep -qE "^${req//./\\.}(\.|$)" "$all_ops_file"; then
      fail "$bin: no $req instruction in the checked functions (was the PTX for it issued, and" \
           "built for sm_90a?)"
    fi
  done
done

if ((failures)); then
  echo "check_sass.sh: FAIL ($failures problem(s))"
  exit 1
fi
echo "check_sass.sh: PASS (${#binaries[@]} binary(ies)${requires[*]:+; found: ${requires[*]}})"

# find_tool NAME [OVERRIDE]: the path of a CUDA toolkit program (cuobjdump, cu++filt, ...), sourced
# by tools/check_sass.sh and tools/sass_same.sh: OVERRIDE when given (an environment variable such
# as $CUOBJDUMP), else NAME on PATH, else $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin;
# prints nothing when none has it.
find_tool() {
  local name="$1" override="${2:-}"
  if [[ -n "$override" ]]; then echo "$override"; return; fi
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    if [[ -n "$dir" && -x "$dir/bin/$name" ]]; then echo "$dir/bin/$name"; return; fi
  done
}

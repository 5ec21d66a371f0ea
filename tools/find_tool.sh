# Sourced by tools/check_sass.sh and tools/sass_same.sh.
# find_tool NAME [OVERRIDE]: the path of a CUDA toolkit program (cuobjdump, cu++filt, ...):
# OVERRIDE when given (an environment variable such as $CUOBJDUMP), else NAME on PATH, else
# $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin; prints nothing when none has it.
find_tool() {
  local name="$1" override="${2:-}"
  if [[ -n "$override" ]]; then echo "$override"; return; fi
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    if [[ -n "$dir" && -x "$dir/bin/$name" ]]; then echo "$dir/bin/$name"; return; fi
  done
}

# require_cuobjdump WHO: the path of cuobjdump (find_tool with $CUOBJDUMP), or, when there is none,
# an error naming WHO and how to get one on stderr and exit 2 (the calling script's usage status).
require_cuobjdump() {
  local dump
  dump=$(find_tool cuobjdump "${CUOBJDUMP:-}")
  if [[ -z "$dump" || ! -x "$dump" ]]; then
    echo "$1: cuobjdump not found: set CUOBJDUMP=/path/to/cuobjdump or put it on PATH" \
         "(scripts/deps.sh fetches one into .tools/bin, scripts/env.sh adds that to PATH; or" \
         "install the CUDA toolkit's cuobjdump: package cuda-cuobjdump," \
         "pip nvidia-cuda-cuobjdump)" >&2
    exit 2
  fi
  echo "$dump"
}

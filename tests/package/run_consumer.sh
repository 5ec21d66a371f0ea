#!/usr/bin/env bash
# Builds and runs tests/package/consumer against this checkout one way:
#   run_consumer.sh <find_package|add_subdirectory|fetchcontent>[_cuda] <tmakit source dir> <scratch dir>
# A _cuda suffix also builds and runs the consumer's .cu file (TMAKIT_CONSUMER_CUDA: the README's
# CMake lines for CUDA consumers; it prints why it does not run without a GPU).
set -euo pipefail
how=$1 src=$2 work=$3
cuda=OFF
if [[ $how == *_cuda ]]; then cuda=ON; how=${how%_cuda}; fi
rm -rf "$work" && mkdir -p "$work"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
args=(-DTMAKIT_CONSUME="$how" -DTMAKIT_SOURCE_DIR="$src" -DTMAKIT_CONSUMER_CUDA=$cuda)
case "$how" in
  find_package)
    cmake -S "$src" -B "$work/tmakit-build" "${gen[@]}" -DTMAKIT_CUDA=OFF -DTMAKIT_BUILD_TESTS=OFF \
      -DTMAKIT_BUILD_TOOLS=OFF -DTMAKIT_BUILD_EXAMPLES=OFF -DTMAKIT_INSTALL=ON >"$work/log" 2>&1
    cmake --install "$work/tmakit-build" --prefix "$work/prefix" >>"$work/log" 2>&1
    args+=(-DCMAKE_PREFIX_PATH="$work/prefix")
    ;;
  fetchcontent)
    # FetchContent clones a git repository: snapshot the working tree (committed or not) into one.
    mkdir -p "$work/repo"
    git -C "$src" ls-files -co --exclude-standard -z | tar -C "$src" --null -T - -cf - | tar -C "$work/repo" -xf -
    git -C "$work/repo" init -q && git -C "$work/repo" add -A &&
      git -C "$work/repo" -c user.name=t -c user.email=t@t commit -qm snapshot
    args+=(-DTMAKIT_SOURCE_DIR="$work/repo" -DTMAKIT_GIT_TAG=HEAD)
    ;;
esac
if ! cmake -S "$src/tests/package/consumer" -B "$work/consumer-build" "${gen[@]}" "${args[@]}" >>"$work/log" 2>&1 ||
   ! cmake --build "$work/consumer-build" >>"$work/log" 2>&1; then
  cat "$work/log"; exit 1
fi
# A consumer that links only tmakit::tmakit must not have compiled the kernels (tmakit::ops).
if find "$work/consumer-build" -name 'libtmakit_ops*' | grep -q .; then
  echo "tmakit_ops was built although the consumer links only tmakit::tmakit"; exit 1
fi
# ... yet tmakit::ops stays available to it (a dry run of its build, where CUDA is on and ninja used).
if [[ $how != find_package && ${#gen[@]} -gt 0 ]] &&
   ninja -C "$work/consumer-build" -t targets all 2>/dev/null | grep -q 'libtmakit_ops'; then
  cmake --build "$work/consumer-build" --target tmakit_ops -- -n >/dev/null ||
    { echo "tmakit_ops cannot be built from the consumer project"; exit 1; }
fi
"$work/consumer-build/consumer"
if [ $cuda = ON ]; then "$work/consumer-build/consumer_cuda"; fi

#!/bin/bash
# The fourth camp's fuzz runner: each program given, under plain python and under
# `flamefuse fuse` (cold, warm, --no-adapt; at the default eager_below and at 0, each with a
# private cache), stdout and stderr compared (flamefuse's own summary lines left out).
# Usage, from the repository root: tests/data/fuzz4/run.sh tests/data/fuzz4/f*.py
PY=${PYTHON:-python}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
for p in "$@"; do
  work=$(mktemp -d)
  $PY "$p" > "$work/np.out" 2> "$work/np.err"
  for eb in default 0; do
    for mode in cold warm noadapt; do
      extra=""; [ $mode = noadapt ] && extra="--no-adapt"
      if [ $eb = 0 ]; then export FLAMEFUSE_EAGER_BELOW=0; else unset FLAMEFUSE_EAGER_BELOW; fi
      PYTHONPATH=$ROOT FLAMEFUSE_CACHE_DIR=$work/cache-$eb $PY -m flamefuse.cli fuse $extra "$p" \
        > "$work/ff.out" 2> "$work/ff.err.all"
      grep -v "^flamefuse fuse\|^  \|^adapt:" "$work/ff.err.all" | grep -v "^$" > "$work/ff.err"
      diff -q "$work/np.out" "$work/ff.out" > /dev/null || {
        echo "== $p eb=$eb $mode: stdout differs"; diff "$work/np.out" "$work/ff.out" | head -20; }
      diff -q "$work/np.err" "$work/ff.err" > /dev/null || {
        echo "== $p eb=$eb $mode: stderr differs"; diff "$work/np.err" "$work/ff.err" | head -10; }
    done
  done
  rm -rf "$work"
done

#!/usr/bin/env bash
# One call of a lent GPU machine during a visit (see scripts/gpu_visit.py).
#
# A lent machine stays up between calls only while they follow each other
# closely, and one call may run 10 minutes at most. So the visit runs in
# the background, in its own session, and each call only waits on it:
#
#   bash scripts/gpu_lease.sh WAIT_S BUDGET_S CHAPTER ...
#
# The first call on a machine installs the carried wheels (.whl) and starts
# `gpu_visit.py run --tests` with BUDGET_S seconds for everything; every
# call then waits until the visit ends or WAIT_S seconds pass, and copies
# the archive made so far, the visit log and the runner's output to $OUT.
# A call that finds a fresh machine (the last one was given back) starts
# the visit again with the chapters it is given. TEST_PATHS, if set, holds
# `--test-path FILE` options that narrow the GPU tests.
set -u
wait_s=$1 budget_s=$2; shift 2
visit=/tmp/visit
begin=$(date +%s)
if [ ! -e "$visit/started" ]; then
    mkdir -p "$visit" && touch "$visit/started"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
        --format=csv
    python3 scripts/offline_wheels.py install .whl --site /tmp/book-site \
        > "$visit/env.sh" || exit 1
    . "$visit/env.sh"
    python3 -c "import jax, jaxlib; print(jax.__version__, jax.devices())"
    # A diagnostic script to run first, alone on the GPU (optional).
    [ -n "${PROBE:-}" ] && python3 "$PROBE"
    setsid nohup python3 scripts/gpu_visit.py run --out "$visit" \
        --budget "$budget_s" --tests ${TEST_PATHS:-} "$@" \
        > "$visit/runner.log" 2>&1 &
    echo $! > "$visit/pid"
fi
while kill -0 "$(cat $visit/pid)" 2>/dev/null \
        && [ $(( $(date +%s) - begin )) -lt "$wait_s" ]; do
    sleep 5
done
cp "$visit/runner.log" "$OUT/" 2>/dev/null
cp "$visit/gpu-visit.tar.gz" "$OUT/" 2>/dev/null
cp "$visit/staging/visit_log.json" "$OUT/" 2>/dev/null
kill -0 "$(cat $visit/pid)" 2>/dev/null && echo "gpu_lease: still running" \
    || echo "gpu_lease: visit ended"
tail -n 40 "$visit/runner.log"

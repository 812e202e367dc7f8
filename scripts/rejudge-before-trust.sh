#!/bin/sh
# The agent evaluation of before trust (2026-11-27, commit 27b05d9: confidence alone decided)
# judged as today's evaluation judges (docs/evaluations.md, "The runs from before trust,
# re-judged"): that commit checked out beside this one, today's judge ported into its evaluation
# (rejudge-before-trust.patch: the ground truth moving on once its step is done, a tap judged by
# the view that takes it, every step's screen, chooser and action kept in the JSON), built, run
# in-sample and leave-one-app-out on the development data, and each fast-path step tallied
# (rejudge_tally.py: judged precision per condition and app, unjudged steps against the model
# alone on the same screen). About 10 minutes to build and 6 to run on two cores.
#   scripts/rejudge-before-trust.sh [DROIDTASK_DIR] [WORK_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$(realpath "${1:-$here/../../shared/data/droidtask-dev}")
work=${2:-$(mktemp -d)}
git -C "$here/.." worktree add --force "$work/before-trust" 27b05d9 >/dev/null
git -C "$work/before-trust" apply "$here/rejudge-before-trust.patch"
(cd "$work/before-trust" && CARGO_TARGET_DIR="$work/target" cargo build --release -p atlas-cli)
for mode in in-sample leave-one-app-out; do
  flag=""; [ "$mode" = leave-one-app-out ] && flag=--leave-one-app-out
  "$work/target/release/atlas" eval agent "$data" $flag --json "$work/$mode.json" >/dev/null
  echo "== $mode"
  python3 "$here/rejudge_tally.py" "$work/$mode.json"
done
git -C "$here/.." worktree remove --force "$work/before-trust"

#!/usr/bin/env bash
# Spin models of the three queues' protocols (tests/spin/*.pml), checked
# exhaustively: every interleaving of the producers' and consumers' steps,
# asserting no lost item, no duplicate, each producer's order, and that no
# thread can wait forever. Each model also names mutations (#ifdef BUG_*)
# that break the protocol; Spin must find an error in every one, which
# shows the checks can fail. Prints one verdict a model or mutation, then
# "N passed, M failed". Each verification is a search of its own, so they
# run side by side, one a core; the verdicts are printed in order.
cd "$(dirname "$0")/../.."
if ! command -v spin >/dev/null; then
  echo "spin is not installed (tools/deps.sh installs Debian's spin)"
  echo "0 passed, 1 failed"; exit 1
fi
work=build/spin
rm -rf "$work"; mkdir -p "$work"
p=0; f=0

# verify MODEL [BUG]: prints the verdict; returns 0 when it is the expected one.
verify() {
  local model=$1 bug=${2:-} name dir out errors states
  # A full model's search visits every state (spmc: millions), so its
  # verifier is optimised; a mutation's stops at its first error, in a
  # few thousand states, where -O2's compile time would be most of it.
  local opt=-O2; [ -n "$bug" ] && opt=-O0
  name=$(basename "$model" .pml)${bug:+ -D$bug}
  dir="$work/$(basename "$model" .pml)${bug:+-$bug}"
  mkdir -p "$dir"
  if ! (cd "$dir" && spin ${bug:+-D$bug} -a "$OLDPWD/$model" >spin.log 2>&1 &&
        cc "$opt" -w -DSAFETY -DCOLLAPSE -o pan pan.c >cc.log 2>&1); then
    echo "FAIL $name: the model does not build (see $dir)"; return 1
  fi
  out=$(cd "$dir" && timeout 300 ./pan 2>&1); echo "$out" >"$dir/pan.log"
  errors=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' <<<"$out" | tail -1)
  states=$(sed -nE 's/^ *([0-9]+) states, stored.*/\1/p' <<<"$out" | tail -1)
  if [ -z "$errors" ] || grep -q "max search depth too small" <<<"$out"; then
    echo "FAIL $name: the search did not complete (see $dir/pan.log)"; return 1
  fi
  if [ -z "$bug" ]; then
    if [ "$errors" = 0 ]; then echo "ok   $name: verified, $states states, no error"; return 0; fi
    echo "FAIL $name: $(grep -m1 '^pan:1' <<<"$out") (trail: spin -t -p in $dir)"; return 1
  fi
  if [ "$errors" != 0 ]; then echo "ok   $name: error found, as it must be: $(grep -m1 '^pan:1' <<<"$out" | sed 's/^pan:1: //')"; return 0; fi
  echo "FAIL $name: the mutation went unnoticed ($states states)"; return 1
}

checks=()
for model in tests/spin/*.pml; do
  for bug in "" $(grep -oE '^#ifn?def BUG_[A-Z_]+' "$model" | awk '{print $2}' | sort -u); do
    checks+=("$model $bug")
  done
done
i=0
for job in "${checks[@]}"; do
  [ "$(jobs -rp | wc -l)" -ge "${SOLOIST_JOBS:-$(nproc)}" ] && wait -n
  # $job is "MODEL [BUG]": split on purpose
  # shellcheck disable=SC2086
  { verify $job >"$work/verdict-$i" 2>&1; echo $? >"$work/rc-$i"; } &
  i=$((i + 1))
done
wait
for i in "${!checks[@]}"; do
  cat "$work/verdict-$i"
  if [ "$(cat "$work/rc-$i" 2>/dev/null)" = 0 ]; then p=$((p + 1)); else f=$((f + 1)); fi
done
echo "$p passed, $f failed"
[ $f = 0 ]

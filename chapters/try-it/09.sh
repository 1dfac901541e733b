#!/usr/bin/env bash
# Chapter 09: clients that wait. Two terminals' worth of redis-cli: in the
# first, a client blocks in BLPOP on a key that does not exist; from
# the second, CLIENT LIST and INFO clients show it waiting (flag b,
# blocked_clients:1), then a transaction adds the key and, inside the
# same EXEC, lists the clients again: the transaction's own client shows
# flag x, and the waiter still shows b, because ready keys are served only
# after the whole EXEC. Then the first terminal's reply arrives.
# The first terminal is a redis-cli in the background. Full form: the
# second terminal waits 2 s before the transaction. Short form: 0.2 s.
. "$(dirname "$0")/lib.sh"

if short; then pause=0.2; else pause=2; fi
start_server

# Prints the fields of CLIENT LIST this chapter reads, one client a line.
clients() { tr -d '\r' | grep -o 'id=[0-9]* .* flags=[^ ]* .* cmd=[^ ]*' |
  awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(id|flags|cmd)=/) printf "%s ", $i; print "" }'; }
blocked() { cli info clients | tr -d '\r' | grep '^blocked_clients:'; }

echo "--- terminal 1: BLPOP q 0 (q does not exist: the client blocks)"
out=$(mktemp)
cli blpop q 0 >"$out" &
waiter=$!
_tryit_pids="$_tryit_pids $waiter"
for i in $(seq 50); do [ "$(blocked)" = blocked_clients:1 ] && break; sleep 0.1; done

echo "--- terminal 2: CLIENT LIST and INFO clients while it waits"
cli client list | clients
# expect: ^id=[0-9]+ flags=b cmd=blpop $
blocked
# expect: ^blocked_clients:1$
sleep "$pause"

echo "--- terminal 2: MULTI, LPUSH q a, CLIENT LIST, EXEC"
printf 'MULTI\nLPUSH q a\nCLIENT LIST\nEXEC\n' | cli | clients
# expect: ^id=[0-9]+ flags=x cmd=exec $
# expect: ^id=[0-9]+ flags=b cmd=blpop $

echo "--- terminal 1: served after the EXEC"
wait "$waiter"
paste -sd' ' "$out"
rm -f "$out"
# expect: ^q a$
blocked
# expect: ^blocked_clients:0$

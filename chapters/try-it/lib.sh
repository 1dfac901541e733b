# chapters/try-it/lib.sh: what every chapter's try-it script shares.
#
# A try-it script is the box at the top of a chapter, as a file: the book
# shows the script itself, so the box and what runs cannot differ, and
# `make test` runs every script in its short form (TRYIT_SHORT=1) and
# checks the lines the script promises with `# expect: REGEX` comments
# (tests/suites/72-try-it.sh, tools/tryit.py).
#
# Source it from a script:   . "$(dirname "$0")/lib.sh"
# It leaves the shell in the repository root, with the server built, and:
#   short            true under TRYIT_SHORT=1 (the test's short form)
#   start_server ARGS...   starts build/soloist-server on a free loopback
#                    port with ARGS; sets PORT and SERVER_PID; the server
#                    is stopped when the script exits
#   start_redis      the same for Debian's redis-server (sets REDIS_PORT)
#   cli ARGS...      redis-cli against PORT
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
make -s -j2 all >/dev/null

short() { [ -n "${TRYIT_SHORT:-}" ]; }

_tryit_pids=""
trap 'for p in $_tryit_pids; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

_wait_ready() {  # port: up to 5 s for the server to answer PING
  local i
  for i in $(seq 50); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "try-it: no server answered on port $1" >&2
  return 1
}

start_server() {
  PORT=$(free_port)
  build/soloist-server --port "$PORT" --bind 127.0.0.1 "$@" >/dev/null 2>&1 &
  SERVER_PID=$!
  _tryit_pids="$_tryit_pids $SERVER_PID"
  _wait_ready "$PORT"
}

start_redis() {
  REDIS_PORT=$(free_port)
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
  _tryit_pids="$_tryit_pids $!"
  _wait_ready "$REDIS_PORT"
}

cli() { redis-cli -p "$PORT" "$@"; }

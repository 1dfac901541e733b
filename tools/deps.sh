#!/usr/bin/env bash
# Installs (as root) or names (otherwise) the Debian packages soloist needs.
#   tools/deps.sh install      everything `make test` and `make findings` use
#   tools/deps.sh check-build  only what compiling needs; never installs
set -u
BUILD_PKGS="build-essential pkg-config libcmocka-dev"
# clang-format: make format and its check (tests/suites/14-format.sh).
# python3-redis: the redis-py client program of tests/integration.
# ccache: the graders build the whole server once per exercise and per
# handout from the same sources; tests/run.sh compiles through it.
TEST_PKGS="python3 redis-tools redis-server libck-dev pandoc graphviz gnuplot-nox lcov chromium chromium-driver valgrind clang libclang-rt-dev spin ccache clang-format python3-redis"
# Not for the tests: bench/p1_anatomy.py counts system calls with perf.
BENCH_PKGS="linux-perf"
missing() {
  local out=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out="$out $p"
  done
  echo "$out"
}
case "${1:-install}" in
check-build)
  m=$(missing $BUILD_PKGS)
  if [ -n "$m" ]; then
    echo "soloist: missing build packages:$m" >&2
    echo "soloist: run 'make deps' (as root), or: apt-get install -y$m" >&2
    exit 1
  fi ;;
install)
  m=$(missing $BUILD_PKGS $TEST_PKGS $BENCH_PKGS)
  [ -z "$m" ] && exit 0
  if [ "$(id -u)" != 0 ]; then
    echo "soloist: these Debian packages are missing:$m" >&2
    echo "soloist: as root, run: apt-get update && apt-get install -y$m" >&2
    exit 1
  fi
  echo "soloist: installing Debian packages:$m"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || { echo "soloist: apt-get update failed" >&2; exit 1; }
  # policy-rc.d keeps the redis-server package from starting its own
  # daemon on port 6379: the tests start their own on free ports.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y -qq --no-install-recommends $m >/tmp/soloist-apt.log 2>&1 || {
    echo "soloist: apt-get install failed; see /tmp/soloist-apt.log" >&2; tail -5 /tmp/soloist-apt.log >&2; exit 1; }
  echo "soloist: packages installed" ;;
*) echo "usage: $0 install|check-build" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Chapter 07: a 10 MB GET with reply copy avoidance on and off.
# It stores a 10 MB value, GETs it with reply-copy-avoidance yes and then
# no, and prints what the main thread copied into reply buffers for each
# GET (INFO reply_bytes_copied) and how many replies went by reference
# (INFO reply_refs). Then a reader that has not read its reply yet: another
# client runs SET big x meanwhile, and the reader still receives the value
# as it was when its GET ran.
# Full form: the same again with two I/O threads forced active, so a worker
# writes the reply (a few seconds). Short form: io-threads 1 only.
. "$(dirname "$0")/lib.sh"

stat() { cli info stats | tr -d '\r' | sed -n "s/^$1://p"; }

# INFO's own reply is a bulk string that main copies, so the counter also
# grows by each INFO's length: measure one INFO and take it out.
get_copied_kb() {
  local a b c
  a=$(stat reply_bytes_copied)
  b=$(stat reply_bytes_copied) # b - a: one INFO reply
  cli get big | wc -c >/dev/null
  c=$(stat reply_bytes_copied) # c - b: one INFO reply and the GET
  echo $(((c - b - (b - a) + 512) / 1024))
}

# A reader sends GET big and reads only the first 64 KB of its reply; then
# another client overwrites the key; then the reader reads the rest.
half_sent_reader() {
  python3 - "$PORT" <<'EOF'
import socket, subprocess, sys
port = int(sys.argv[1])
def reply(s, first=b""):
    buf = bytearray(first)
    while b"\r\n" not in buf:
        buf += s.recv(65536)
    n = int(buf[1:buf.index(b"\r\n")])
    need = buf.index(b"\r\n") + 2 + n + 2
    while len(buf) < need:
        buf += s.recv(1 << 20)
    return bytes(buf[buf.index(b"\r\n") + 2:need - 2])
get = b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"
a = socket.create_connection(("127.0.0.1", port))
a.sendall(get)
before = reply(a)                      # the value, read in full
r = socket.socket()
r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
r.connect(("127.0.0.1", port))
r.sendall(get)
first = r.recv(65536)                  # the reply is under way...
subprocess.run(["redis-cli", "-p", str(port), "set", "big", "x"], check=True, stdout=subprocess.DEVNULL)
now = subprocess.run(["redis-cli", "-p", str(port), "strlen", "big"], check=True,
                     stdout=subprocess.PIPE, text=True).stdout.strip()
got = reply(r, first)                  # ...and finishes after SET big x
print("after SET big x (the key now holds %s byte): the reader received %d bytes, %s"
      % (now, len(got), "the value as it was when its GET ran" if got == before else "SOMETHING ELSE"))
EOF
}

show() { # one server's run: ARGS for start_server
  start_server "$@"
  head -c 10485760 /dev/urandom | cli -x set big >/dev/null
  local refs0=$(stat reply_refs)
  echo "GET with copy avoidance on:  main copied $(get_copied_kb) KB into reply buffers," \
    "reply_refs grew by $(($(stat reply_refs) - refs0))"
  cli config set reply-copy-avoidance no >/dev/null
  refs0=$(stat reply_refs)
  echo "GET with copy avoidance off: main copied $(get_copied_kb) KB into reply buffers," \
    "reply_refs grew by $(($(stat reply_refs) - refs0))"
  cli config set reply-copy-avoidance yes >/dev/null
  half_sent_reader
}

echo "--- io-threads 1: main writes every reply"
show
# expect: ^GET with copy avoidance on:  main copied 0 KB into reply buffers, reply_refs grew by 1$
# expect: ^GET with copy avoidance off: main copied 10240 KB into reply buffers, reply_refs grew by 0$
# expect: the reader received 10485760 bytes, the value as it was when its GET ran$

if ! short; then
  echo "--- io-threads 2, forced active: a worker writes the large reply"
  show --io-threads 2 --io-threads-always-active yes
fi

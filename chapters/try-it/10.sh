#!/usr/bin/env bash
# Chapter 10: the types' encodings. A list, a set and a hash filled a
# little at a time, with small thresholds set by CONFIG SET so that each
# conversion happens within a few elements, and OBJECT ENCODING printed
# after every step. Then elements are removed: only the list goes back.
# The same script in short and full form (it takes a second either way).
. "$(dirname "$0")/lib.sh"

start_server
# step: the command, then the key's encoding after it.
step() { cli "$@" >/dev/null; printf '%-34s %s\n' "$*" "$(cli object encoding "$2")"; }

echo "--- a list, list-max-listpack-size 4 (four elements a node)"
cli config set list-max-listpack-size 4 >/dev/null
step rpush l a b c
# expect: ^rpush l a b c +listpack$
step rpush l d e
# expect: ^rpush l d e +quicklist$
step rpop l 1
# expect: ^rpop l 1 +quicklist$
step rpop l 2
# expect: ^rpop l 2 +listpack$

echo "--- a set, set-max-listpack-entries 4"
cli config set set-max-listpack-entries 4 >/dev/null
step sadd s 1 2 3
# expect: ^sadd s 1 2 3 +intset$
step sadd s x
# expect: ^sadd s x +listpack$
step sadd s y
# expect: ^sadd s y +hashtable$
step srem s x y 1
# expect: ^srem s x y 1 +hashtable$

echo "--- a hash, hash-max-listpack-value 64 (the default)"
step hset h f v
# expect: ^hset h f v +listpack$
step hset h g "$(printf 'v%.0s' $(seq 65))"
# expect: ^hset h g v+ +hashtable$
step hdel h g
# expect: ^hdel h g +hashtable$

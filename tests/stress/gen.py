"""Random requests for the stress run (tests/stress/stress.py).

Owns nothing: pure functions of a random.Random, so a printed seed replays
the same bytes. Three kinds of output:

- commands(): valid requests from the server's own command table (the
  string, keyspace, sorted-set, connection and server commands of
  src/cmd_*.c) with
  arguments drawn to hurt: empty strings, binary bytes with CR/LF/NUL,
  numbers at and past the 64-bit limits, huge counts and offsets, odd
  option combinations, wrong arities and unknown names. Nothing that may
  end the connection or touch other clients (QUIT, SHUTDOWN, CLIENT KILL
  of a real client, CONFIG SET of limits, timeout or a password) — the
  driver adds QUIT itself where it expects the close;
- encode(): one request as multibulk RESP or as an inline line (quoted
  with \\xHH escapes, Valkey's sdssplitargs syntax);
- garbage(): malformed RESP, truncated requests and random bytes, each
  with what Valkey does with it when that is certain (one exact error
  text and a close), else None.

Valkey anchors: src/networking.c processInlineBuffer/processMultibulkBuffer
(the request syntax), src/t_string.c and src/expire.c (the argument rules
the numbers below are picked to straddle).
"""

KEYS = ["k%d" % i for i in range(16)]

INTS = ["0", "1", "-1", "2", "10", "100", "1000000", "2147483647", "2147483648",
        "-2147483648", "4294967296", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "", "abc", "+1", "01", " 1", "1 ", "-0", "1e3", "0x10", "1.5", "inf", "nan",
        "99999999999999999999999999"]
FLOATS = ["0", "1.5", "-1.5", "1e308", "-1e308", "1e309", "1e-400", "inf", "-inf",
          "nan", "+inf", "3.0e2", ".5", "5.", "", "abc", "0x10", "1,5",
          "9223372036854775807", "-0.0", " 1", "1 "]


def key(rng):
    r = rng.random()
    if r < 0.75:
        return rng.choice(KEYS)
    if r < 0.85:
        return big_pool_key(rng)  # enough keys to make the table grow and rehash
    if r < 0.9:
        return ""
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 12)))


def big_pool_key(rng):
    return "key:%d" % rng.randrange(20000)


def blob(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def value(rng):
    r = rng.random()
    if r < 0.3:
        return rng.choice(["", "v", "hello", "12", "-7", "3.5", "0"])
    if r < 0.55:
        return rng.choice(INTS)
    if r < 0.8:
        return blob(rng, rng.randint(0, 64))
    if r < 0.95:
        return b"x" * rng.randint(100, 4000) + blob(rng, 8)
    if r < 0.99:
        return blob(rng, 16) * rng.randint(2048, 4096)  # 32-64 KB: the big-bulk path
    return b"y" * rng.randint(100000, 200000)


def num(rng):
    r = rng.random()
    if r < 0.5:
        return str(rng.randint(-5, 100))
    return rng.choice(INTS)


def pattern(rng):
    return rng.choice(["*", "k*", "k?", "k[0-9]", "k[^1]*", "*1*", "", "\\*", "[", "[a-",
                       "**", "k\\", "*" * 30 + "x", "?" * 5, "[]]", "k[!-~]"])


def score(rng):
    return rng.choice([str(rng.randint(-3, 10)), str(rng.randint(-3, 10)), rng.choice(FLOATS)])


def score_bound(rng):
    s = score(rng)
    return rng.choice([s, "(" + s, "-inf", "+inf", "(", "[1"])


def lex_bound(rng):
    return rng.choice(["-", "+", "[a", "(a", "[m5", "(m5", "[", "(", "a", "-x", b"[\x00\xff"])


def member(rng):
    r = rng.random()
    if r < 0.8:
        return "m%d" % rng.randrange(20)
    if r < 0.9:
        return "zm:%d" % rng.randrange(5000)  # sets big enough to span skiplist levels
    return value(rng)


def _zadd(rng):
    opts = [rng.choice(["NX", "XX", "GT", "LT", "CH", "INCR", "nx", "BOGUS"])
            for _ in range(rng.choice([0, 0, 0, 1, 1, 2]))]
    pairs = [x for _ in range(rng.choice([1, 1, 2, 3, 10, 100])) for x in (score(rng), member(rng))]
    return ["ZADD", key(rng)] + opts + pairs


def _zrange(rng):
    kind = rng.choice(["index", "index", "score", "lex"])
    if kind == "index":
        lo, hi, opts = num(rng), num(rng), []
    elif kind == "score":
        lo, hi, opts = score_bound(rng), score_bound(rng), ["BYSCORE"]
    else:
        lo, hi, opts = lex_bound(rng), lex_bound(rng), ["BYLEX"]
    for _ in range(rng.choice([0, 0, 1, 2])):
        opts += rng.choice([["REV"], ["WITHSCORES"], ["LIMIT", num(rng), num(rng)], ["LIMIT"], ["BYSCORE"],
                            ["BOGUS"]])
    return ["ZRANGE", key(rng), lo, hi] + opts


def _zset_command(rng):
    k = key(rng)
    return rng.choice([
        lambda: ["ZSCORE", k, member(rng)],
        lambda: ["ZMSCORE", k] + [member(rng) for _ in range(rng.choice([1, 2, 5]))],
        lambda: ["ZCARD", k],
        lambda: [rng.choice(["ZRANK", "ZREVRANK"]), k, member(rng)] + rng.choice([[], [], ["WITHSCORE"], ["X"]]),
        lambda: ["ZINCRBY", k, score(rng), member(rng)],
        lambda: ["ZREM", k] + [member(rng) for _ in range(rng.choice([1, 2, 5, 30]))],
        lambda: [rng.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]), k, score_bound(rng), score_bound(rng)] +
        rng.choice([[], ["WITHSCORES"], ["LIMIT", num(rng), num(rng)], ["WITHSCORES", "LIMIT", "0", "3"]]),
        lambda: [rng.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"]), k, lex_bound(rng), lex_bound(rng)] +
        rng.choice([[], ["LIMIT", num(rng), num(rng)]]),
        lambda: ["ZREVRANGE", k, num(rng), num(rng)] + rng.choice([[], ["WITHSCORES"]]),
        lambda: ["ZCOUNT", k, score_bound(rng), score_bound(rng)],
        lambda: ["ZLEXCOUNT", k, lex_bound(rng), lex_bound(rng)],
        lambda: [rng.choice(["ZPOPMIN", "ZPOPMAX"]), k] + rng.choice([[], [num(rng)]]),
        lambda: ["ZRANDMEMBER", k] + rng.choice([[], [num(rng)], [num(rng), "WITHSCORES"], ["-5", "WITHSCORES"]]),
        lambda: ["ZREMRANGEBYSCORE", k, score_bound(rng), score_bound(rng)],
        lambda: ["ZREMRANGEBYRANK", k, num(rng), num(rng)],
        lambda: ["ZREMRANGEBYLEX", k, lex_bound(rng), lex_bound(rng)],
        lambda: ["ZSCAN", k, rng.choice(["0", num(rng)])] + rng.choice([[], ["COUNT", num(rng)],
                                                                        ["MATCH", pattern(rng)], ["NOSCORES"]]),
    ])()


def _set_opts(rng):
    opts = []
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        o = rng.choice(["EX", "PX", "EXAT", "PXAT", "NX", "XX", "GET", "KEEPTTL", "ex", "BOGUS"])
        opts.append(o)
        if o.upper() in ("EX", "PX", "EXAT", "PXAT") and rng.random() < 0.9:
            opts.append(num(rng))
    return opts


def _expire_opts(rng):
    return [rng.choice(["NX", "XX", "GT", "LT", "nx", "XY"]) for _ in range(rng.choice([0, 0, 0, 1, 2]))]


def _client(rng):
    sub = rng.choice(["ID", "GETNAME", "SETNAME", "LIST", "INFO", "HELP", "KILL", "SETINFO",
                      "NO-EVICT", "NO-TOUCH", "NOSUCH", "list"])
    if sub == "SETNAME":
        return ["CLIENT", sub, rng.choice(["n1", "", "a b", "x" * 100, blob(rng, 5)])]
    if sub == "LIST":
        return ["CLIENT", sub] + rng.choice([[], ["TYPE", "normal"], ["TYPE", "bogus"], ["ID", num(rng)],
                                             ["ID", "1", "2", "3"]])
    if sub == "KILL":
        # Never a real client: an address nobody has, an id far out of range.
        return ["CLIENT", sub] + rng.choice([["1.2.3.4:1"], ["ADDR", "1.2.3.4:1"], ["ID", "999999999"],
                                             ["ID", "abc"], ["TYPE", "bogus"], ["SKIPME"],
                                             ["USER", "nobody", "ID", "888888888"]])
    if sub == "SETINFO":
        return ["CLIENT", sub, rng.choice(["lib-name", "lib-ver", "bogus"]), rng.choice(["x", "a b", ""])]
    if sub in ("NO-EVICT", "NO-TOUCH"):
        return ["CLIENT", sub, rng.choice(["on", "off", "maybe"])]
    return ["CLIENT", sub]


def _bit_offset(rng):
    # Up to a 4 MB string; 2^32 is one past what proto-max-bulk-len allows
    # (SETRANGE already builds 512 MB strings now and then).
    return rng.choice([num(rng), str(rng.randint(0, 100000)), "33554431", "4294967296", "-1", "x"])


def _lcs_opts(rng):
    return rng.choice([[], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"], ["IDX", "MINMATCHLEN", num(rng)],
                       ["LEN", "IDX"], ["MINMATCHLEN"], ["BOGUS"]])


def _config(rng):
    r = rng.random()
    if r < 0.5:
        return ["CONFIG", "GET"] + [rng.choice(["*", "hz", "maxclients", "*max*", "nosuch", "port", "save",
                                                "client-output-buffer-limit", "bind", "HZ"])
                                    for _ in range(rng.choice([1, 1, 2, 3]))]
    if r < 0.6:
        # several pairs: all or nothing (duplicates and unknown names refused)
        return ["CONFIG", "SET", "hz", rng.choice(["10", "x"]), rng.choice(["tcp-keepalive", "hz", "nosuch"]),
                rng.choice(["300", "y"])]
    if r < 0.85:
        name, vals = rng.choice([
            ("hz", ["1", "10", "50", "100", "0", "-1", "abc", "2147483647"]),
            ("loglevel", ["notice", "warning", "bogus"]),
            ("prefetch-batch-max-size", ["0", "16", "128", "129", "-1"]),
            ("tcp-keepalive", ["300", "0", "x"]),
            ("appendonly", ["no", "maybe"]),
            ("save", [""]),
            ("nosuch-option", ["1"]),
            ("databases", ["16"]),
        ])
        return ["CONFIG", "SET", name, rng.choice(vals)]
    return rng.choice([["CONFIG", "RESETSTAT"], ["CONFIG", "HELP"], ["CONFIG"], ["CONFIG", "NOSUCH"]])


# The commands command() knows how to build, and those never sent: they
# end the connection or the server, block, or change what a reply means
# for the rest of the connection (MULTI, SUBSCRIBE, MONITOR; CLIENT REPLY,
# which _client() never builds, is of that kind too).
KNOWN = {"get", "set", "setnx", "setex", "psetex", "getset", "getdel", "getex", "mget", "mset", "msetnx",
         "del", "unlink", "exists", "type", "incr", "decr", "incrby", "decrby", "incrbyfloat", "append",
         "strlen", "getrange", "setrange", "expire", "pexpire", "expireat", "pexpireat", "ttl", "pttl",
         "expiretime", "pexpiretime", "persist", "keys", "scan", "randomkey", "dbsize", "flushdb", "flushall",
         "ping", "echo", "select", "auth", "hello", "client", "command", "config", "info", "time", "rename",
         "renamenx", "copy", "getbit", "setbit", "bitcount", "substr", "lcs", "zadd", "zincrby", "zrem",
         "zscore", "zmscore", "zcard", "zrank", "zrevrank", "zrange", "zrangebyscore", "zrevrangebyscore",
         "zrangebylex", "zrevrangebylex", "zrevrange", "zcount", "zlexcount", "zpopmin", "zpopmax",
         "zrandmember", "zremrangebyscore", "zremrangebyrank", "zremrangebylex", "zscan"}
NEVER = {"shutdown", "quit", "debug", "monitor", "subscribe", "psubscribe", "ssubscribe", "unsubscribe",
         "punsubscribe", "sunsubscribe", "multi", "exec", "discard", "watch", "unwatch", "sync", "psync",
         "replicaof", "slaveof", "failover", "wait", "waitaof", "reset", "save", "bgsave", "bgrewriteaof",
         "swapdb", "move", "migrate", "restore", "cluster", "readonly", "readwrite", "acl", "module",
         "script", "eval", "evalsha", "function", "fcall", "latency", "memory", "slowlog", "lolwut"}

# Commands the server lists that command() does not know: name -> arity
# (Valkey's convention: N exact, -N at least N, the name included).
# stress.py fills it from COMMAND LIST / COMMAND INFO at start, so a
# command added to the server is sent (with random arguments) at once.
GENERIC = {}


def generic(rng, name, arity):
    n = arity - 1 if arity > 0 else -arity - 1 + rng.choice([0, 0, 1, 2, 5])
    if rng.random() < 0.1:
        n = max(0, n + rng.choice([-1, 1]))
    return [name.upper()] + [rng.choice([key, value, num])(rng) for _ in range(n)]


def command(rng):
    """One random valid-syntax request (a list of str/bytes)."""
    k = lambda: key(rng)  # noqa: E731
    v = lambda: value(rng)  # noqa: E731
    n = lambda: num(rng)  # noqa: E731
    many = lambda f: [f() for _ in range(rng.choice([1, 1, 2, 3, 8, 40, 300]))]  # noqa: E731
    table = [
        (10, lambda: ["GET", k()]),
        (10, lambda: ["SET", k(), v()] + _set_opts(rng)),
        (2, lambda: ["SETNX", k(), v()]),
        (2, lambda: ["SETEX", k(), n(), v()]),
        (2, lambda: ["PSETEX", k(), n(), v()]),
        (2, lambda: ["GETSET", k(), v()]),
        (2, lambda: ["GETDEL", k()]),
        (3, lambda: ["GETEX", k()] + rng.choice([[], ["EX", n()], ["PX", n()], ["EXAT", n()], ["PXAT", n()],
                                                 ["PERSIST"], ["EX"], ["PERSIST", "EX", "1"]])),
        (3, lambda: ["MGET"] + many(k)),
        (3, lambda: ["MSET"] + [x for _ in range(rng.choice([1, 2, 5, 50])) for x in (k(), v())]),
        (1, lambda: ["MSET"] + [x for _ in range(rng.choice([100, 500])) for x in (big_pool_key(rng), "v")]),
        (1, lambda: ["MSETNX"] + [x for _ in range(rng.choice([1, 2, 5])) for x in (k(), v())]),
        (3, lambda: ["DEL"] + many(k)),
        (1, lambda: ["UNLINK"] + many(k)),
        (2, lambda: ["EXISTS"] + many(k)),
        (1, lambda: ["TYPE", k()]),
        (3, lambda: [rng.choice(["INCR", "DECR"]), k()]),
        (3, lambda: [rng.choice(["INCRBY", "DECRBY"]), k(), n()]),
        (3, lambda: ["INCRBYFLOAT", k(), rng.choice(FLOATS)]),
        (4, lambda: ["APPEND", k(), v()]),
        (1, lambda: ["STRLEN", k()]),
        (3, lambda: ["GETRANGE", k(), n(), n()]),
        (3, lambda: ["SETRANGE", k(), rng.choice([n(), str(rng.randint(0, 70000)), "4194303", "4194304",
                                                  "536870911", "-1"]), v()]),
        (3, lambda: [rng.choice(["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"]), k(), n()] + _expire_opts(rng)),
        (2, lambda: [rng.choice(["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"]), k()]),
        (1, lambda: [rng.choice(["RENAME", "RENAMENX"]), k(), k()]),
        (1, lambda: ["COPY", k(), k()] + rng.choice([[], ["REPLACE"], ["DB", "0"], ["DB", "1"], ["DB", n()],
                                                     ["DB"], ["REPLACE", "DB", "0"], ["BOGUS"]])),
        (2, lambda: ["GETBIT", k(), _bit_offset(rng)]),
        (2, lambda: ["SETBIT", k(), _bit_offset(rng), rng.choice(["0", "1", "1", "2", "-1", "x"])]),
        (2, lambda: ["BITCOUNT", k()] + rng.choice([[], [n()], [n(), n()], [n(), n(), "BIT"], [n(), n(), "BYTE"],
                                                    [n(), n(), "bogus"]])),
        (1, lambda: ["SUBSTR", k(), n(), n()]),
        (0.5, lambda: ["LCS", k(), k()] + _lcs_opts(rng)),
        (6, lambda: _zadd(rng)),
        (3, lambda: _zrange(rng)),
        (8, lambda: _zset_command(rng)),
        (1, lambda: ["KEYS", pattern(rng)]),
        (2, lambda: ["SCAN", rng.choice(["0", n()])] + rng.choice([[], ["MATCH", pattern(rng)], ["COUNT", n()],
                                                                    ["TYPE", rng.choice(["string", "zset", "x"])],
                                                                    ["COUNT"], ["MATCH", "*", "COUNT", "5"]])),
        (1, lambda: ["RANDOMKEY"]),
        (1, lambda: ["DBSIZE"]),
        (0.3, lambda: ["FLUSHDB"] + rng.choice([[], ["ASYNC"], ["SYNC"], ["BOGUS"]])),
        (0.2, lambda: ["FLUSHALL"] + rng.choice([[], ["SYNC"]])),
        (3, lambda: ["PING"] + rng.choice([[], [v()], [v(), v()]])),
        (2, lambda: ["ECHO", v()]),
        (0.5, lambda: ["TIME"]),
        (1, lambda: ["SELECT", rng.choice(["0", "1", "-1", "abc", "16"])]),
        (1, lambda: ["AUTH"] + rng.choice([["pw"], ["default", "pw"], [], ["a", "b", "c"]])),
        (1, lambda: ["HELLO"] + rng.choice([[], ["2"], ["3"], ["3"], ["4"], ["abc"], ["3", "SETNAME", "x"],
                                            ["2", "AUTH", "default", "pw"], ["3", "BOGUS"]])),
        (2, lambda: _client(rng)),
        (0.5, lambda: ["COMMAND"] + rng.choice([["COUNT"], ["INFO", "get", "set", "nosuch"], ["DOCS", "get"],
                                                ["LIST"], ["NOSUCH"], ["INFO"]])),
        (0.05, lambda: ["COMMAND"]),
        (1.5, lambda: _config(rng)),
        (1, lambda: ["INFO"] + rng.choice([[], ["server"], ["clients", "memory"], ["all"], ["everything"],
                                           ["nosuch"], ["keyspace", "stats", "iothreads"]])),
        (1, lambda: [rng.choice(["NOSUCHCMD", "get|x", "", "G E T", "quitx", "CLIENT|LIST"])] +
            [v() for _ in range(rng.randint(0, 3))]),
    ]
    for name, arity in sorted(GENERIC.items()):
        table.append((2, lambda name=name, arity=arity: generic(rng, name, arity)))
    total = sum(w for w, _ in table)
    x = rng.random() * total
    for w, f in table:
        x -= w
        if x <= 0:
            break
    args = f()
    # Sometimes the wrong number of arguments.
    if rng.random() < 0.05 and len(args) > 1:
        args = args[:-1]
    elif rng.random() < 0.05:
        args = args + [v()]
    return args


def garbage_command(rng):
    """command(), less CLIENT and CONFIG: garbage is mutated at random, and
    a mutation must not turn a harmless CLIENT KILL or CONFIG SET into one
    that closes another client or changes the server's limits."""
    while True:
        args = command(rng)
        if args[0] not in ("CLIENT", "CONFIG"):
            return args


def _b(a):
    return a if isinstance(a, bytes) else str(a).encode()


def encode_multibulk(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = _b(a)
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def encode_inline(args):
    """Every argument double-quoted with \\xHH escapes: any bytes, an empty
    argument, and no line break inside the line."""
    parts = []
    for a in args:
        parts.append(b'"' + b"".join(b"\\x%02x" % c for c in _b(a)) + b'"')
    return b" ".join(parts) + b"\r\n"


def encode(rng, args):
    # An inline line must stay under 64 KB (Valkey's PROTO_INLINE_MAX_SIZE:
    # a longer one is refused as soon as a read leaves it unfinished).
    size = sum(len(_b(a)) for a in args)
    if size < 4000 and rng.random() < 0.15:
        return encode_inline(args)
    if size < 16000 and rng.random() < 0.05 and all(_b(a) and all(33 <= c < 127 and c not in b"\"'\\" for c in _b(a))
                                   for a in args):
        return b" ".join(_b(a) for a in args) + rng.choice([b"\r\n", b"\n"])
    return encode_multibulk(args)


# ------------------------------------------------------------------ garbage

PE = b"-ERR Protocol error: "

# (bytes, the exact reply Valkey sends before closing); each is a request
# stream whose first request breaks the protocol in one known way.
SPECIALS = [
    (b"*2147483648\r\n", PE + b"invalid multibulk length\r\n"),
    (b"*abc\r\n", PE + b"invalid multibulk length\r\n"),
    (b"*1\r\n$-1\r\n", PE + b"invalid bulk length\r\n"),
    (b"*1\r\n$9223372036854775808\r\n", PE + b"invalid bulk length\r\n"),
    (b"*1\r\n$8388609\r\n", PE + b"invalid bulk length\r\n"),  # over --proto-max-bulk-len 8mb
    (b"*1\r\nfoo\r\n", PE + b"expected '$', got 'f'\r\n"),
    (b"*1\r\n\x00oo\r\n", PE + b"expected '$', got '\x00'\r\n"),
    (b"*1\r\n$4\r\nPINGxx", PE + b"invalid CRLF in request\r\n"),
    (b"*1\rX", PE + b"invalid CRLF in request\r\n"),
    (b"*1\r\n$4\rX", PE + b"invalid CRLF in request\r\n"),
    (b'SET k "unbalanced\r\n', PE + b"unbalanced quotes in request\r\n"),
    (b"SET k 'a'b\r\n", PE + b"unbalanced quotes in request\r\n"),
    (b"PI\x00NG\r\n", PE + b"embedded NUL byte in inline request\r\n"),
    (b"x" * 70000, PE + b"too big inline request\r\n"),
    (b"*" + b"1" * 70000, PE + b"too big mbulk count string\r\n"),
    (b"*1\r\n$" + b"1" * 70000, PE + b"too big bulk count string\r\n"),
    # A big bulk (>= 32 KB, read into its object as it arrives) whose
    # CRLF is wrong, behind a GET that must still be answered first.
    (b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n" + b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40000\r\n" + b"v" * 40000 + b"!!",
     PE + b"invalid CRLF in request\r\n", 1),
]

# For a client that has not authenticated (requirepass set).
UNAUTH_SPECIALS = [
    (b"*11\r\n", PE + b"unauthenticated multibulk length\r\n"),
    (b"*2\r\n$4\r\nAUTH\r\n$16385\r\n", PE + b"unauthenticated bulk length\r\n"),
]


def mutate(rng, data):
    """A few byte-level edits of a valid stream."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 5)):
        if not b:
            b += blob(rng, 4)
        i = rng.randrange(len(b))
        op = rng.randrange(7)
        if op == 0:
            b[i] = rng.randrange(256)
        elif op == 1:
            del b[i]
        elif op == 2:
            b[i:i] = rng.choice([b"\r", b"\n", b"\r\n", b"*", b"$", b"\x00", b'"', b"'", b"-1", b"9" * 12])
        elif op == 3:
            j = data.find(b"$", i)
            if j >= 0:
                e = b.find(b"\r", j)
                if e > 0:
                    b[j + 1:e] = rng.choice([b"-5", b"0", b"99999", b"1048577", b"abc", b"", b"+3"])
        elif op == 4:
            del b[i:]
        elif op == 5:
            b[i:i] = b[max(0, i - 20):i]
        else:
            b[i:i] = blob(rng, rng.randint(1, 8))
    return bytes(b)


def within_unauth_limits(args):
    """Would an unauthenticated client's request pass the parser (at most
    10 arguments of at most 16384 bytes; Valkey's parseMultibulk)?"""
    return len(args) <= 10 and all(len(_b(a)) <= 16384 for a in args)


def unauth_command(rng):
    while True:
        args = garbage_command(rng)
        if within_unauth_limits(args) and args[0] not in ("AUTH", "HELLO"):
            return args


def special(rng, table, unauth=False):
    """One of table's streams, after 0-3 valid commands: (bytes, (number
    of replies before the error, the error reply), description)."""
    entry = rng.choice(table)
    data, exp, inner = entry if len(entry) == 3 else entry + (0,)
    draw = unauth_command if unauth else garbage_command
    pre = [draw(rng) for _ in range(rng.choice([0, 0, 1, 3]))]
    return (b"".join(encode_multibulk(a) for a in pre) + data, (len(pre) + inner, exp),
            "special %r" % data[:24])


def garbage(rng):
    """(bytes, expected reply or None, description)."""
    r = rng.random()
    if r < 0.25:
        return special(rng, SPECIALS)
    if r < 0.55:
        cmds = [garbage_command(rng) for _ in range(rng.randint(1, 6))]
        return mutate(rng, b"".join(encode(rng, a) for a in cmds)), None, "mutated"
    if r < 0.7:
        cmds = [garbage_command(rng) for _ in range(rng.randint(1, 4))]
        data = b"".join(encode(rng, a) for a in cmds)
        return data[:rng.randrange(len(data))], None, "truncated"
    if r < 0.85:
        return blob(rng, rng.randint(1, 3000)), None, "random"
    # Random bytes that look like RESP.
    tok = [b"*", b"$", b"\r\n", b"\r", b"\n", b"1", b"3", b"-1", b"0", b"10", b"PING", b"GET", b"\x00",
           b'"', b" ", b"99999999999"]
    return b"".join(rng.choice(tok) for _ in range(rng.randint(1, 200))), None, "tokens"

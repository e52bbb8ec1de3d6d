#!/usr/bin/env python3
"""Writes the seeds of fuzz_tidald (test/fuzz/fuzz_tidald.c) to test/fuzz/seeds/fuzz_tidald/.

Each seed is a session with tidald as its real clients hold it: tidalctl's requests (one
connection each: the request as tidalctl formats it, the answer read, the connection
closed), tidal_client's tenant (registration, "stats SEQ PART violations V sm S:N ..." and
"stats-end SEQ" answers), and the nasty ones the fuzzer should start from (over-long,
truncated, NUL and other bad bytes, bad names and SM sets, unknown verbs, 64+ partitions,
destroy while a hist waits on it, clients that stall, close, or split every byte).

    test/fuzz/gen_tidald_seeds.py [--out DIR]      (default: the seeds directory)

The input format is described at the top of fuzz_tidald.c; this file is its one writer.
Run it again after changing a seed here, and commit its output.
"""
import argparse
import os

SEND, REPEAT, EOF, CLOSE, STALL, TIMEOUT, RESTART = range(7)


class Seed:
    def __init__(self, chunk=0):
        self.b = bytearray([chunk & 0x3F])

    def _rec(self, op, client):
        self.b.append((op << 3) | client)

    def send(self, client, data):
        """client sends data (str or bytes), in records of at most 255 bytes"""
        data = data.encode() if isinstance(data, str) else bytes(data)
        for i in range(0, max(len(data), 1), 255):
            part = data[i:i + 255]
            self._rec(SEND, client)
            self.b.append(len(part))
            self.b += part
        return self

    def repeat(self, client, count, data):
        """data sent count times ('%' = the index), count 1..256"""
        data = data.encode() if isinstance(data, str) else bytes(data)
        assert 1 <= count <= 256 and len(data) <= 255
        self._rec(REPEAT, client)
        self.b += bytes([count - 1, len(data)])
        self.b += data
        return self

    def fill(self, client, n, ch=" "):
        """n copies of ch, in few bytes of seed"""
        while n >= 255:
            k = min(n // 255, 256)
            self.repeat(client, k, ch * 255)
            n -= 255 * k
        return self.send(client, ch * n) if n else self

    def eof(self, client):
        self._rec(EOF, client)
        return self

    def close(self, client):
        self._rec(CLOSE, client)
        return self

    def stall(self, client):
        self._rec(STALL, client)
        return self

    def timeout(self):
        self._rec(TIMEOUT, 0)
        return self

    def restart(self, torn=0):
        """tidald killed and started again; torn: what the kill interrupted (0..4)"""
        self._rec(RESTART, 0)
        self.b.append(torn)
        return self

    def ctl(self, client, request):
        """one tidalctl invocation: its request line, then it closes after the answer"""
        return self.send(client, request + "\n").close(client)


# tidal_client's stats answer for one partition (nonzero SMs only) and its stats-end
def tenant_answer(part, violations, sms):
    counters = "".join(" %d:%d" % (s, n) for s, n in sms)
    return "stats $ %s violations %d sm%s\nstats-end $\n" % (part, violations, counters)


def seeds():
    s = {}

    # tidalctl's whole vocabulary, each request on its own connection (test/control/run.sh)
    t = Seed()
    for r in ["ping", "create ls 0-47", "create be 48-131", "create everything all", "list",
              "set ls 0-31", "set be 32-131", "destroy everything", "tenants", "tenants stats",
              "hist ls", "list"]:
        t.ctl(0, r)
    s["tidalctl-session"] = t

    # the same session split at every byte boundary, and in 7-byte reads
    for name, chunk in (("tidalctl-split-1", 1), ("tidalctl-split-7", 7)):
        t = Seed(chunk)
        for r in ["create ls 0-47", "create be 48-131", "list", "set ls 0-31", "destroy be", "ping"]:
            t.ctl(0, r)
        s[name] = t

    # pipelined on one connection, then EOF
    s["pipelined"] = Seed().send(1, "create a 0-3\ncreate b 4-7\nlist\nset a 8-11\ndestroy b\nlist\nping\n"
                                     "tenants\n").eof(1)

    # a tenant (libtidal) next to tidalctl: registration, gen notifications, hist, tenants stats
    t = Seed()
    t.send(1, "tenant 4242 python3.11\n")
    t.send(2, "tenant 4243 bench mps\n")
    t.ctl(0, "create ls 0-47")
    t.ctl(0, "create be 48-131")
    t.send(0, "hist ls\n")
    t.send(1, tenant_answer("ls", 1, [(0, 3), (1, 3), (31, 3)]))
    t.send(2, tenant_answer("ls", 0, [(5, 9)]) + "stats $ ls violations 5 sm 0:100\n")  # late: dropped
    t.close(0)
    t.send(3, "tenants stats\n")
    t.send(1, "stats $ ls violations 0 sm 0:1\nstats $ be violations 2 sm 48:5 131:6\nstats-end $\n")
    t.timeout()
    t.close(3)
    t.ctl(0, "tenants")
    t.ctl(0, "set ls 0-15")
    t.close(1)
    t.ctl(0, "tenants")
    s["tenant-hist"] = t

    # a tenant that never answers: the deadline passes; a late answer is dropped
    t = Seed()
    t.send(1, "tenant 77 mute\n")
    t.ctl(0, "create x 1")
    t.send(0, "hist x\nlist\n")
    t.timeout()
    t.send(1, "stats $ x violations 9 sm 1:1\nstats-end $\n")
    t.ctl(0, "hist x")
    s["tenant-timeout"] = t

    # one over-long line (> 8191 bytes), then a request that must still be answered
    t = Seed()
    t.repeat(0, 40, "a" * 250)
    t.send(0, "\nping\n")
    t.repeat(1, 33, "create x " + "1," * 120)  # 8217 bytes of one create: too long as well
    t.send(1, "5\nlist\n").eof(1)
    s["overlong"] = t

    # exactly 8191 bytes + "\n" is a line; 8192 bytes is not
    t = Seed()
    t.send(0, "create x 0-").fill(0, 8191 - len("create x 0-") - 1).send(0, "1\n")
    t.send(0, "set x 1-").fill(0, 8192 - len("set x 1-") - 1).send(0, "2\nlist\n")
    t.eof(0)
    s["line-limit"] = t

    # bad bytes: NUL, control characters, DEL, UTF-8, "\r\n", a lone "\r", empty lines
    s["bad-bytes"] = (Seed().send(0, b"ping\x00zz\nlist\x01\n\xff\xfe\ncreate ls 0-3\r\n\r\n\n  \n"
                                     b"create \xc3\xa9 1\nping\t\n\tlist\n").eof(0))

    # names: 31 characters, 32, bad characters, empty, tenant names of 63 / 64
    n31, n32 = "a" * 31, "b" * 32
    s["names"] = (Seed().send(0, "create %s 1\ncreate %s 2\ncreate a/b 3\ncreate a!b 4\ncreate .-_ 5\n"
                                 "set %s 6\ndestroy %s\ndestroy\nhist %s\nlist\n" % (n31, n32, n31, n32, n31))
                  .send(0, "tenant 1 %s\n" % ("t" * 64)).send(0, "tenant 1 bad/name\ntenant 0 x\n"
                                                              "tenant 2147483648 x\n").eof(0)
                  .send(2, "tenant 2147483647 %s mps\nlist\n" % ("t" * 63)))

    # SM sets: out of range, reversed, malformed, all / none, blanks inside
    s["smsets"] = (Seed().send(0, "create x 0-256\ncreate x 256\ncreate x 5-3\ncreate x 1,,2\n"
                                  "create x abc\ncreate x 99999999999999999999\ncreate x -1\n"
                                  "create x 0-255\nset x all\nset x none\nset x  0 - 3 , 7 ,255 \n"
                                  "set x all extra\nset x 1-\nset x ,1\nset x\nlist\n").eof(0))

    # unknown verbs, wrong argument counts, stats lines from a client that is no tenant
    s["verbs"] = (Seed().send(0, "frob\nPING\nping now\nlist all\ntenants all\nstats\nstats 1\n"
                                 "stats 1 x violations 0 sm 0:1\nstats-end 1\nstats-end\nhist\n"
                                 "hist a b\ncreate\nset x\ntenant\ntenant 5\ntenant x y\n"
                                 "tenant 5 x yes\n").eof(0))

    # the table: 64 partitions, the 65th refused, one freed and reused
    t = Seed()
    t.repeat(0, 70, "create p% %\n")
    t.send(0, "list\ndestroy p3\ncreate q 1\ncreate r 2\nlist\n")
    t.repeat(0, 64, "destroy p%\n")
    t.send(0, "list\n").eof(0)
    s["max-partitions"] = t

    # destroy (and re-create) a partition while a hist on it waits for a tenant
    t = Seed()
    t.send(1, "tenant 9 slow\n")
    t.ctl(0, "create x 0-7")
    t.send(2, "hist x\nlist\n")
    t.ctl(0, "destroy x")
    t.ctl(0, "create x 8-9")
    t.send(1, tenant_answer("x", 0, [(3, 4)]))
    t.ctl(0, "list")
    t.send(2, "destroy x\n").eof(2)
    s["destroy-while-hist"] = t

    # interleaved: three clients' lines cut and mixed byte groups at a time
    t = Seed(3)
    t.send(0, "cre").send(1, "li").send(2, "tenant 5").send(0, "ate a 1").send(1, "st\nping")
    t.send(2, " t\n").send(0, "\nset a").send(1, "\n").send(0, " 2\n").send(2, "stats-end $\n")
    t.send(1, "destroy a\n").eof(0).eof(1).close(2)
    s["interleaved"] = t

    # EOF in the middle of a line; CLOSE while waiting; CLOSE with answers unread
    t = Seed()
    t.send(0, "create half 0-").eof(0)
    t.send(3, "tenant 3 t\n")
    t.ctl(1, "create x 1")
    t.send(1, "hist x\n").close(1)
    t.send(2, "list\nlist\nlist\n").close(2)
    t.timeout()
    t.ctl(1, "list")
    s["eof-close"] = t

    # a client that does not read its answers, a tenant that does not read its notifications
    t = Seed()
    t.send(1, "tenant 8 deaf\n").stall(1)
    t.stall(0).send(0, "create a 1\nlist\nlist\n")
    t.repeat(2, 20, "set a %\n")
    t.stall(0).send(0, "ping\n").eof(0)
    t.stall(1).eof(1)
    s["stall"] = t

    # a client whose unread answers pass tidald's 4 MB cap is dropped (its last request
    # still took effect); the others go on
    t = Seed()
    t.repeat(0, 64, "create p% " + ",".join(str(i) for i in range(0, 100, 2)) + "\n")
    t.stall(1).repeat(1, 200, "list\n").repeat(1, 200, "list\n")
    t.ctl(2, "list")
    s["drop-unread"] = t

    # tidald killed (between requests, and inside the kinds of update a kill can cut) and
    # started again: the segment is resumed, tenants and tidalctl come back
    t = Seed()
    t.send(1, "tenant 5 survivor\n")
    t.ctl(0, "create ls 0-47")
    t.ctl(0, "create be all")
    t.send(2, "hist ls\n")
    for torn in range(5):
        t.restart(torn)
        t.send(1, "tenant 5 survivor\n")
        t.ctl(0, "list")
        t.ctl(0, "set ls 0-%d" % (10 + torn))
    t.ctl(0, "create after 1").ctl(0, "destroy be").ctl(0, "list")
    s["restart"] = t

    # regression: a kill inside "set" of an "all" partition (mask written, flags not) left
    # it flagged "all" over a smaller mask after the restart (list said "all", tenants
    # applied 0-3); shm_resume now drops the flag
    s["regress-torn-set-all"] = Seed().ctl(0, "create be all").restart(4).ctl(0, "list").ctl(0, "set be all")

    # a tenant sending garbage: bad stats, wrong SEQ, over-long lines, other requests
    t = Seed()
    t.send(1, "tenant 1 noisy\n")
    t.ctl(0, "create x 1")
    t.send(0, "hist x\n")
    t.send(1, "stats 999 x violations 1 sm 1:1\nstats $ x violations 1 sm 256:1\nstats $ y violations 1\n"
              "list\ncreate z 1\n\x01\nstats-end 999\n")
    t.repeat(1, 40, "z" * 250)
    t.send(1, "\nstats $ x violations 18446744073709551615 sm 0:18446744073709551615 0:1\nstats-end $\n"
              "stats-end $\n")
    t.close(0)
    s["tenant-garbage"] = t

    return s


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(here, "seeds", "fuzz_tidald"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, seed in sorted(seeds().items()):
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(seed.b)
    print("wrote %d seeds to %s" % (len(seeds()), a.out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Random small pthread programs for the `irs verify` oracle test (tests/verify_oracle.rs).

    python3 tests/verify_programs/gen.py            # writes rand_00.c .. rand_13.c next to itself
    python3 tests/verify_programs/gen.py --count 20 --out /tmp/more
    python3 tests/verify_programs/gen.py --check    # regenerate in memory, compare with the files

Program i comes from seed i (plus a fixed salt), so the output is deterministic. Each program:
2-3 worker threads of 2-5 operations each, among
  * read a shared variable into a local        r1 = x0;
  * write a constant or a local plus one       x1 = 3;   x1 = r1 + 1;
  * a block of 1-2 operations inside a mutex   pthread_mutex_lock(&m0); ...; pthread_mutex_unlock(&m0);
    (possibly nested inside another mutex; with two mutexes, sometimes two threads nest them in
    opposite orders on purpose, so lock-order inversions, hence deadlocks, happen)
  * a branch on a local read before            if (r1 == 2) { x0 = 5; }
over 1-3 shared ints and 0-2 global mutexes (always released). main creates the workers,
joins them all, and sometimes asserts something about the final state.

The generator is also a second, independent oracle: it runs every interleaving of its own
model of the program (sequential consistency; one event per shared load, store, lock, unlock)
and counts the Mazurkiewicz traces under the same dependence the verifier uses (events of
different threads are dependent iff they touch the same variable or mutex; creation, exit and
join never vary since main only creates and then joins), and which bugs occur (a failed final
assertion, a deadlock). It writes them into the header as `expect-traces:` and `expect-bugs:`,
which the test checks against the brute-force oracle over real executions.
"""

import argparse
import os
import random
import sys

SALT = 0x1B5
MAX_MODEL_INTERLEAVINGS = 2500  # interleavings of the whole program, main included
MIN_TRACES = 2


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.nvars = rng.randint(1, 3)
        self.nmut = rng.choice([0, 1, 1, 2, 2])
        self.nthreads = rng.choice([2, 3, 3])
        self.consts = [1, 2, 3, 5, 7]

    def var(self):
        return "x%d" % self.rng.randrange(self.nvars)

    def simple(self, locals_, allow_if=True):
        """One operation without a mutex: returns a statement tree."""
        r = self.rng.random()
        if r < 0.35:
            name = "r%d" % (len(locals_) + 1)
            locals_.append(name)
            return ("read", name, self.var())
        if r < 0.75 or not locals_ or not allow_if:
            if locals_ and self.rng.random() < 0.5:
                return ("write_local", self.var(), self.rng.choice(locals_))
            return ("write_const", self.var(), self.rng.choice(self.consts))
        local = self.rng.choice(locals_)
        value = self.rng.choice([0, 1, 2, 3])
        return ("if", local, value, self.simple(locals_, allow_if=False))

    def op(self, locals_, held):
        free = [m for m in range(self.nmut) if m not in held]
        if free and self.rng.random() < 0.35:
            m = self.rng.choice(free)
            body = []
            for _ in range(self.rng.randint(1, 2)):
                if len(held) == 0 and self.rng.random() < 0.5:
                    body.append(self.op(locals_, held + [m]))
                else:
                    body.append(self.simple(locals_))
            return ("block", m, body)
        return self.simple(locals_)

    def thread(self):
        locals_ = []
        ops = [self.op(locals_, []) for _ in range(self.rng.randint(2, 5))]
        return ops, locals_

    def program(self):
        threads = [self.thread() for _ in range(self.nthreads)]
        if self.nmut == 2 and self.rng.random() < 0.4:
            # A lock-order inversion: one thread nests m1 in m0, another m0 in m1.
            for t, (outer, inner) in zip(self.rng.sample(range(self.nthreads), 2), [(0, 1), (1, 0)]):
                ops, locals_ = threads[t]
                block = ("block", outer, [("block", inner, [self.simple(locals_, allow_if=False)])])
                ops[self.rng.randrange(len(ops))] = block
        final = None
        if self.rng.random() < 0.6:
            # Something about the final state that some schedules may break.
            written = sorted({v for ops, _ in threads for v in written_consts(ops)} | {1, 2})
            if self.nvars >= 2 and self.rng.random() < 0.4:
                final = ("sum_ne", "x0", "x1", self.rng.choice([2, 3, 4, 6]))
            else:
                final = ("ne", self.var(), self.rng.choice(written))
        return threads, final


def written_consts(ops):
    for op in ops:
        if op[0] == "write_const":
            yield op[2]
        elif op[0] == "block":
            yield from written_consts(op[2])
        elif op[0] == "if":
            yield from written_consts([op[3]])


# ---- C output ---------------------------------------------------------------------------------

def c_stmt(op, indent):
    pad = "  " * indent
    kind = op[0]
    if kind == "read":
        return [f"{pad}{op[1]} = {op[2]};"]
    if kind == "write_const":
        return [f"{pad}{op[1]} = {op[2]};"]
    if kind == "write_local":
        return [f"{pad}{op[1]} = {op[2]} + 1;"]
    if kind == "if":
        return [f"{pad}if ({op[1]} == {op[2]}) {{"] + c_stmt(op[3], indent + 1) + [f"{pad}}}"]
    if kind == "block":
        lines = [f"{pad}pthread_mutex_lock(&m{op[1]});"]
        for b in op[2]:
            lines += c_stmt(b, indent)
        lines.append(f"{pad}pthread_mutex_unlock(&m{op[1]});")
        return lines
    raise ValueError(kind)


def c_final(final):
    if final is None:
        return None
    if final[0] == "ne":
        return f"{final[1]} != {final[2]}"
    return f"{final[1]} + {final[2]} != {final[3]}"


def to_c(name, seed, g, threads, final, traces, bugs, interleavings):
    out = []
    out.append(f"// {name}: generated by gen.py (seed {seed}); do not edit, regenerate.")
    out.append(f"// {len(threads)} worker threads, {g.nvars} shared variable(s), {g.nmut} mutex(es)"
               + (f"; main asserts {c_final(final)} at the end." if final else "; no assertion."))
    out.append(f"// gen.py's own model of it: {interleavings} interleavings, {traces} traces.")
    out.append(f"// expect-interleavings: {interleavings}")
    out.append(f"// expect-traces: {traces}")
    out.append(f"// expect-bugs: {', '.join(sorted(bugs)) if bugs else 'none'}")
    out.append("#include <assert.h>")
    out.append("#include <pthread.h>")
    out.append("")
    out.append("int " + ", ".join("x%d" % i for i in range(g.nvars)) + ";")
    for m in range(g.nmut):
        out.append(f"pthread_mutex_t m{m} = PTHREAD_MUTEX_INITIALIZER;")
    out.append("")
    for t, (ops, locals_) in enumerate(threads):
        out.append(f"void *t{t + 1}(void *arg) {{")
        if locals_:
            out.append("  int " + ", ".join(f"{l} = 0" for l in locals_) + ";")
        for op in ops:
            out += c_stmt(op, 1)
        out.append("  return arg;")
        out.append("}")
        out.append("")
    out.append("int main(void) {")
    out.append("  pthread_t " + ", ".join(f"p{t + 1}" for t in range(len(threads))) + ";")
    for t in range(len(threads)):
        out.append(f"  pthread_create(&p{t + 1}, 0, t{t + 1}, 0);")
    for t in range(len(threads)):
        out.append(f"  pthread_join(p{t + 1}, 0);")
    if final:
        out.append(f"  assert({c_final(final)});")
    out.append("  return 0;")
    out.append("}")
    return "\n".join(out) + "\n"


# ---- the model: every interleaving, Mazurkiewicz traces -----------------------------------------

def compile_thread(ops):
    """Flat code: ('load', var, local), ('store', var, const|None, local|None), ('lock', m),
    ('unlock', m), ('skip_unless', local, value, n) which skips the next n instructions unless
    local == value (invisible)."""
    code = []

    def emit(op):
        k = op[0]
        if k == "read":
            code.append(("load", op[2], op[1]))
        elif k == "write_const":
            code.append(("store", op[1], op[2], None))
        elif k == "write_local":
            code.append(("store", op[1], None, op[2]))
        elif k == "if":
            at = len(code)
            code.append(None)
            emit(op[3])
            code[at] = ("skip_unless", op[1], op[2], len(code) - at - 1)
        elif k == "block":
            code.append(("lock", op[1]))
            for b in op[2]:
                emit(b)
            code.append(("unlock", op[1]))

    for op in ops:
        emit(op)
    return code


class TooBig(Exception):
    pass


def final_loads(final):
    if final is None:
        return []
    if final[0] == "ne":
        return [final[1]]
    return [final[1], final[2]]


def explore(threads, final, nvars, limit=None):
    """(interleavings, traces, bugs) of the model of the whole program; raises TooBig beyond
    `limit` interleavings.

    Thread 0 is main: create each worker, join each worker, load what the final assertion
    reads, exit. Each worker: its code, then exit. One scheduling step per event, as EXPLORE
    schedules them: a worker is enabled once created, a join once the worker exited, a lock
    once the mutex is free; an execution ends when no thread is enabled. So the interleaving
    count is the one the oracle's DFS over real executions must find too."""
    n = len(threads)
    codes = [[("create", t + 1) for t in range(n)] + [("join", t + 1) for t in range(n)]
             + [("load", v, None) for v in final_loads(final)] + [("exit", 0)]]
    codes += [compile_thread(ops) + [("exit", t + 1)] for t, (ops, _) in enumerate(threads)]
    nt = n + 1
    traces = {}
    bugs = set()
    count = [0]

    def settle(pc, t, locs):
        # Run invisible instructions.
        code = codes[t]
        while pc < len(code) and code[pc][0] == "skip_unless":
            _, local, value, skip = code[pc]
            pc += 1 if locs.get(local, 0) == value else 1 + skip
        return pc

    def is_enabled(t, pcs, owner, created, exited):
        if t > 0 and not created[t]:
            return False
        if pcs[t] >= len(codes[t]):
            return False
        ins = codes[t][pcs[t]]
        if ins[0] == "lock":
            return owner.get(ins[1]) is None
        if ins[0] == "join":
            return exited[ins[1]]
        return True

    def run(pcs, locals_, mem, owner, created, exited, hist, per_obj):
        enabled = [t for t in range(nt) if is_enabled(t, pcs, owner, created, exited)]
        if not enabled:
            count[0] += 1
            if limit is not None and count[0] > limit:
                raise TooBig()
            key = (tuple(tuple(h) for h in hist), tuple(sorted((o, tuple(s)) for o, s in per_obj.items())))
            if not all(exited):
                outcome = "deadlock"
            elif final is None:
                outcome = "exit"
            elif final[0] == "ne":
                outcome = "exit" if mem[final[1]] != final[2] else "assert"
            else:
                outcome = "exit" if mem[final[1]] + mem[final[2]] != final[3] else "assert"
            old = traces.setdefault(key, outcome)
            assert old == outcome, "one trace, two outcomes"
            if outcome != "exit":
                bugs.add(outcome)
            return
        for t in enabled:
            ins = codes[t][pcs[t]]
            mem2, owner2, locs2, created2, exited2 = mem, owner, locals_[t], created, exited
            if ins[0] == "load":
                if ins[2] is not None:
                    locs2 = dict(locs2)
                    locs2[ins[2]] = mem[ins[1]]
                obj = ("v", ins[1])
            elif ins[0] == "store":
                mem2 = dict(mem)
                mem2[ins[1]] = ins[2] if ins[2] is not None else locals_[t].get(ins[3], 0) + 1
                obj = ("v", ins[1])
            elif ins[0] in ("lock", "unlock"):
                owner2 = dict(owner)
                owner2[ins[1]] = t if ins[0] == "lock" else None
                obj = ("m", ins[1])
            elif ins[0] == "create":
                created2 = list(created)
                created2[ins[1]] = True
                obj = ("t", ins[1])
            elif ins[0] == "join":
                obj = ("t", ins[1])
            else:  # exit
                exited2 = list(exited)
                exited2[ins[1]] = True
                obj = ("t", ins[1])
            pcs2 = list(pcs)
            pcs2[t] = settle(pcs[t] + 1, t, locs2)
            loc_all = list(locals_)
            loc_all[t] = locs2
            hist2 = [list(h) for h in hist]
            hist2[t].append((ins[0], obj))
            per2 = {o: list(s) for o, s in per_obj.items()}
            per2.setdefault(obj, []).append(t)
            run(pcs2, loc_all, mem2, owner2, created2, exited2, hist2, per2)

    locals0 = [{} for _ in range(nt)]
    pcs0 = [settle(0, t, locals0[t]) for t in range(nt)]
    run(pcs0, locals0, {"x%d" % i: 0 for i in range(nvars)}, {}, [True] + [False] * n, [False] * nt,
        [[] for _ in range(nt)], {})
    return count[0], len(traces), bugs


def generate(i):
    seed = SALT + i
    rng = random.Random(seed)
    for _ in range(10000):
        g = Gen(rng)
        threads, final = g.program()
        try:
            interleavings, traces, bugs = explore(threads, final, g.nvars, MAX_MODEL_INTERLEAVINGS)
        except TooBig:
            continue
        if traces >= MIN_TRACES:
            name = "rand_%02d" % i
            return name, to_c(name, seed, g, threads, final, traces, bugs, interleavings)
    raise SystemExit(f"seed {seed}: no program small enough")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=14)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    a = ap.parse_args()
    bad = 0
    for i in range(a.count):
        name, text = generate(i)
        path = os.path.join(a.out, name + ".c")
        if a.check:
            try:
                same = open(path).read() == text
            except OSError:
                same = False
            if not same:
                print(f"{path} differs from what gen.py generates", file=sys.stderr)
                bad += 1
        else:
            with open(path, "w") as f:
                f.write(text)
            print(path)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

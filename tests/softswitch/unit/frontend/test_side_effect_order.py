"""Random expressions with side-effecting calls against a plain-Python model of p4c's order.

The model evaluates left to right: a variable reads its value at that moment, ``inc(v)``
copies ``v`` in, increments it, copies it out when it returns and yields the new value,
``&&``/``||``/``?:`` evaluate only the operand they need.  Both backends must agree with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..helpers import run_words, switch

M = (1 << 32) - 1
DECLS = """
bit<32> inc(inout bit<32> v) { v = v + 1; return v; }
bit<32> dbl(inout bit<32> v) { v = v << 1; return v; }
bool odd(inout bit<32> v, in bit<32> by) { v = v + by; return v[0:0] == 1; }
"""


@dataclass
class Expr:
    """A P4 expression and its model: ``run(env)`` evaluates it, mutating ``env``."""

    src: str
    run: object


def _var(name: str) -> Expr:
    return Expr(name, lambda env: env[name])


def _call(fn: str, name: str) -> Expr:
    def run(env):
        env[name] = (env[name] + 1) & M if fn == "inc" else (env[name] << 1) & M
        return env[name]
    return Expr(f"{fn}({name})", run)


def _binop(op: str, a: Expr, b: Expr) -> Expr:
    f = {"+": lambda x, y: (x + y) & M, "-": lambda x, y: (x - y) & M, "^": lambda x, y: x ^ y}[op]
    return Expr(f"({a.src} {op} {b.src})", lambda env: f(a.run(env), b.run(env)))


def _cond(kind: str, a: Expr, b: Expr) -> Expr:
    """A bool: comparison, or odd(v, e) (a call with an inout argument) joined by && / ||."""
    if kind == "==":
        return Expr(f"({a.src} == {b.src})", lambda env: a.run(env) == b.run(env))
    if kind == "<":
        return Expr(f"({a.src} < {b.src})", lambda env: a.run(env) < b.run(env))

    def odd(env, e=a):
        by = e.run(env)
        env["y"] = (env["y"] + by) & M
        return env["y"] & 1 == 1
    first = Expr(f"odd(y, {a.src})", odd)
    second = Expr(f"({b.src} == 0)", lambda env: b.run(env) == 0)
    if kind == "&&":
        return Expr(f"({first.src} && {second.src})", lambda env: first.run(env) and second.run(env))
    return Expr(f"({first.src} || {second.src})", lambda env: first.run(env) or second.run(env))


def _mux(c: Expr, a: Expr, b: Expr) -> Expr:
    return Expr(f"({c.src} ? {a.src} : {b.src})", lambda env: a.run(env) if c.run(env) else b.run(env))


LEAF = st.one_of(st.sampled_from(["x", "y"]).map(_var),
                 st.tuples(st.sampled_from(["inc", "dbl"]), st.sampled_from(["x", "y"])).map(
                     lambda t: _call(*t)),
                 st.integers(0, 9).map(lambda v: Expr(f"32w{v}", lambda env, v=v: v)))


def _extend(children):
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "^"]), children, children).map(lambda t: _binop(*t)),
        st.tuples(st.sampled_from(["==", "<", "&&", "||"]), children, children, children, children).map(
            lambda t: _mux(_cond(t[0], t[1], t[2]), t[3], t[4])))


EXPRS = st.recursive(LEAF, _extend, max_leaves=6)


def _check(exprs: list[Expr], x0: int, y0: int, backend: str) -> None:
    body = "bit<32> x = hdr.d.w0; bit<32> y = hdr.d.w1;\n"
    body += "".join(f"hdr.d.w{2 + i} = {e.src};\n" for i, e in enumerate(exprs))
    body += "hdr.d.w6 = x; hdr.d.w7 = y;"
    env = {"x": x0, "y": y0}
    want = [x0, y0] + [e.run(env) for e in exprs] + [0] * (4 - len(exprs)) + [env["x"], env["y"]]
    sw = switch(body, backend=backend, decls=DECLS)
    assert run_words(sw, x0, y0) == want, body


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EXPRS, min_size=1, max_size=4), st.integers(0, M), st.integers(0, 20))
def test_python_backend_follows_p4c_order(exprs, x0, y0):
    _check(exprs, x0, y0, "python")


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EXPRS, min_size=4, max_size=4), st.integers(0, M), st.integers(0, 20))
def test_native_backend_follows_p4c_order(exprs, x0, y0):
    _check(exprs, x0, y0, "native")

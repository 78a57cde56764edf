import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers.measuring import bench
from helpers.measuring.bench import Timing, benchmark


class FakeClock:
    """Advances by the programmed amount on each call."""

    def __init__(self, steps):
        self.now = 0.0
        self.steps = iter(steps)

    def __call__(self):
        self.now += next(self.steps)
        return self.now


def test_timing_statistics():
    t = Timing("f", (1.0, 2.0, 3.0, 4.0, 100.0), compile_s=5.0)
    assert t.n == 5
    assert t.median == 3.0
    assert t.min == 1.0
    assert t.iqr == pytest.approx(2.0)
    assert t.rel_spread == pytest.approx(2.0 / 3.0)
    assert t.quantile(1.0) == 100.0


def test_timing_repr_is_readable_and_shows_a_large_spread():
    quiet = Timing("copy", (1e-3, 1e-3, 1e-3), compile_s=0.2)
    assert repr(quiet) == ("copy: median 1 ms (IQR 0 ns, min 1 ms, n=3); "
                           "first call 200 ms")
    assert not quiet.noisy
    noisy = Timing("copy", (1e-3, 2e-3, 3e-3))
    assert noisy.noisy
    assert repr(noisy) == ("copy: median 2 ms (IQR 1 ms, spread 50% of the "
                           "median, min 1 ms, n=3)")


def test_throughput():
    t = Timing("x", (0.5, 0.5))
    assert t.throughput(flops=10, bytes=4) == {"flop/s": 20.0, "byte/s": 8.0}
    with pytest.raises(ValueError, match="needs flops="):
        t.throughput()


def test_timing_roundtrip_and_validation():
    t = Timing("x", (0.1, 0.2), compile_s=1.0)
    assert Timing.from_dict(t.to_dict()) == t
    with pytest.raises(ValueError, match="no samples"):
        Timing("x", ())
    with pytest.raises(ValueError, match="invalid samples"):
        Timing("x", (float("nan"),))
    with pytest.raises(ValueError, match="quantile q"):
        t.quantile(2)


def test_format_seconds():
    assert bench.format_seconds(2.5) == "2.5 s"
    assert bench.format_seconds(1.5e-3) == "1.5 ms"
    assert bench.format_seconds(7e-6) == "7 µs"
    assert bench.format_seconds(3e-8) == "30 ns"


def test_benchmark_with_fake_clock_separates_first_call():
    # first call takes 5 s (compile), each later call 1 s
    clock = FakeClock([0, 5] + [0, 1] * 4)
    t = benchmark(lambda: np.ones(1), warmup=0, repeat=4, clock=clock,
                  name="f")
    assert t.compile_s == 5
    assert t.times == (1, 1, 1, 1)
    assert t.name == "f"


def test_benchmark_blocks_on_every_output_leaf(monkeypatch):
    f = jax.jit(lambda x: {"a": x + 1, "b": [x * 2, x.sum()]})
    t = benchmark(f, jnp.ones(8), warmup=1, repeat=3)
    assert t.n == 3 and t.compile_s > 0

    blocked = []
    monkeypatch.setattr(jax, "block_until_ready",
                        lambda xs: blocked.append(len(xs)) or xs)
    bench.block(f(jnp.ones(8)))
    assert blocked == [3]


def test_block_waits_for_objects_with_block_until_ready():
    waited = []

    class Pending:
        def block_until_ready(self):
            waited.append(True)
            return self

    bench.block({"a": Pending()})
    assert waited == [True]


def test_benchmark_rotates_inputs():
    seen = []

    def f(x):
        seen.append(int(x[0]))
        return x

    sets = [(np.array([i]),) for i in range(3)]
    benchmark(f, warmup=2, repeat=6, rotate=sets)
    # first call, 2 warm-ups, then 6 timed calls cycling 0,1,2
    assert seen == [0, 1, 2, 0, 1, 2, 0, 1, 2]


def test_back_to_back_calls_make_one_sample_their_mean():
    # first call 5 s; then each sample of 4 calls reads the clock twice
    clock = FakeClock([0, 5] + [0, 8] * 3)
    calls = []

    def f():
        calls.append(1)
        return np.ones(1)

    t = benchmark(f, warmup=0, repeat=3, clock=clock, calls_per_sample=4)
    assert t.times == (2, 2, 2)
    assert len(calls) == 1 + 3 * 4
    with pytest.raises(ValueError, match="calls_per_sample must be"):
        benchmark(f, calls_per_sample=0)


def test_back_to_back_calls_with_donated_inputs_wait_for_what_is_alive():
    # each call donates the previous result: only the last one is alive
    state = {"x": jnp.zeros(1000)}
    step = jax.jit(lambda x: x + 1, donate_argnums=0)

    def f():
        state["x"] = step(state["x"])
        return state["x"]

    t = benchmark(f, warmup=1, repeat=3, calls_per_sample=5)
    assert t.n == 3
    assert float(state["x"][0]) == 1 + 1 + 3 * 5


def test_benchmark_rejects_bad_input():
    with pytest.raises(TypeError, match="needs a function"):
        benchmark(jnp.ones(3))
    with pytest.raises(ValueError, match="repeat must be"):
        benchmark(lambda: jnp.ones(1), repeat=0)
    with pytest.raises(ValueError, match="warmup must be"):
        benchmark(lambda: jnp.ones(1), warmup=-1)
    with pytest.raises(ValueError, match="not both"):
        benchmark(lambda x: x, jnp.ones(1), rotate=[(jnp.ones(1),)])
    with pytest.raises(ValueError, match="at least one"):
        benchmark(lambda x: x, rotate=[])


def test_benchmark_rejects_outputs_that_are_not_arrays():
    with pytest.raises(TypeError, match=r"returned a float at \[1\]"):
        benchmark(lambda: (jnp.ones(1), 3.0))
    with pytest.raises(TypeError, match="holds no arrays"):
        benchmark(lambda: None)


def _counting_clock():
    ticks = iter(range(10_000))
    return lambda: float(next(ticks))


def test_interleaved_times_every_function_in_the_chosen_order():
    calls = []

    def make(name):
        def f(x):
            calls.append(name)
            return x
        return f

    fns = {"a": make("a"), "b": make("b")}
    x = np.ones(3)
    timings = bench.interleaved(fns, x, repeat=4, warmup=1,
                                order="blocked", clock=_counting_clock())
    assert calls[4:] == ["a"] * 4 + ["b"] * 4  # after 2 + 2 untimed calls
    assert timings["a"].n == timings["b"].n == 4
    calls.clear()
    bench.interleaved(fns, x, repeat=3, warmup=0, order="alternating")
    assert calls[2:] == ["a", "b"] * 3
    calls.clear()
    bench.interleaved(fns, x, repeat=50, warmup=0, order="random", seed=1)
    timed = calls[2:]
    assert sorted(timed) == ["a"] * 50 + ["b"] * 50
    assert timed != ["a", "b"] * 50 and timed != sorted(timed)


def test_interleaved_rejects_bad_arguments():
    with pytest.raises(TypeError, match="dict of name -> function"):
        bench.interleaved({"a": 3}, 1.0)
    with pytest.raises(ValueError, match="order must be one of"):
        bench.interleaved({"a": lambda x: x}, np.ones(1), order="ABBA")


def test_a_time_budget_stops_slow_calls_after_three_samples():
    now = [0.0]

    def call():  # takes 2 s of the simulated clock
        now[0] += 2.0
        return np.ones(1)

    t = benchmark(call, warmup=3, repeat=20, clock=lambda: now[0],
                  max_seconds=6.0)
    # one warm-up (then a quarter of the budget is gone), then samples
    # until the budget is spent: three, the least it keeps
    assert t.times == (2.0, 2.0, 2.0) and now[0] == 2 + 2 + 3 * 2
    fast = benchmark(lambda: np.ones(1), warmup=1, repeat=20,
                     max_seconds=60.0)
    assert fast.n == 20  # a fast call takes all its samples


def test_a_time_budget_must_be_positive():
    with pytest.raises(ValueError, match="max_seconds must be a positive"):
        benchmark(lambda: np.ones(1), repeat=2, max_seconds=0)

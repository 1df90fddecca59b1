"""Admission by device memory: the bookkeeping (a fake clock), then through a real zygote."""

import time

import pytest

from kgharness.judge.reservation import CONTEXT_MB, MIN_RUNNER_MB, measured_mb, quotas_mb, total_mb
from kgharness.zygote.admission import MARGIN, Admission, task_key
from zygote_client import ZygoteClient
from test_zygote import EVALUATOR, TASK, TESTS


class Holder:
    def __init__(self, name, alive=True):
        self.name, self.alive, self.lock_stats = name, alive, {}

    def __repr__(self):
        return self.name


def make(budget):
    now, granted = [0.0], []

    def grant(h, mb, alone):
        if h.alive:
            granted.append((h, alone))
        return h.alive
    return Admission(budget, grant, clock=lambda: now[0]), granted, now


def test_grants_what_fits_in_fifo_order_and_a_giant_alone():
    adm, granted, now = make(1000)
    a, b, c, d = Holder("a"), Holder("b"), Holder("c"), Holder("d")
    adm.request(a, 600)
    adm.request(b, 600)            # does not fit beside a
    adm.request(c, 100)            # would fit, but FIFO: behind b
    assert granted == [(a, False)]
    now[0] = 2.0
    adm.release(a)
    assert granted == [(a, False), (b, False), (c, False)]
    assert b.lock_stats["mem_wait"] == 2.0
    adm.request(d, 5000)           # larger than the GPU: waits until it is alone, then runs alone
    adm.release(b)
    assert len(granted) == 3
    adm.release(c)
    assert granted[-1] == (d, True)


def test_a_dead_waiter_never_blocks_and_learning_raises_the_need():
    adm, granted, _ = make(1000)
    a, dead, b = Holder("a"), Holder("dead", alive=False), Holder("b")
    adm.request(a, 900)
    adm.request(dead, 900)
    adm.request(b, 900)
    adm.release(a)
    assert [h for h, _ in granted] == [a, b]
    key = task_key({"task": {"source": "x"}})
    v = {"status": "correct", "device_memory": {"reference_mb": 100.0, "candidate_mb": 120.0, "judge_mb": 30.0}}
    assert measured_mb(v) == 250.0 + 2 * CONTEXT_MB
    assert adm.need(key, 5000) == 5000           # nothing measured yet: the estimate
    adm.learn(key, dict(v, status="compile_error"))
    assert adm.need(key, 5000) == 5000           # a run that never got going teaches nothing
    adm.learn(key, v)
    assert adm.need(key, 10) == pytest.approx(MARGIN * (250.0 + 2 * CONTEXT_MB))
    # Measured, the footprint replaces the shapes' estimate both ways: heavy tasks
    # reserved twice what they used.
    assert adm.need(key, 5000) == pytest.approx(MARGIN * (250.0 + 2 * CONTEXT_MB))
    measure = MARGIN * (250.0 + 2 * CONTEXT_MB)
    adm.learn(key, v, oom=True, code="c1")    # it did not fit: its retry asks half the GPU
    assert adm.need(key, 10, "c1") >= 500
    adm.learn(key, v, oom=True, code="c1")    # and again: the whole GPU, alone
    assert adm.need(key, 10, "c1") > 1000
    # Only that candidate's retry: another candidate of the task, and the task, reserve
    # what was measured.
    assert adm.need(key, 10, "c2") == pytest.approx(measure)
    assert adm.need(key, 10) == pytest.approx(measure)
    adm.learn(key, v, code="c1")              # its retry ended: the boost goes
    assert adm.need(key, 10, "c1") == pytest.approx(measure)


def test_a_retry_keeps_its_boost_when_its_task_is_measured_meanwhile():
    adm, granted, _ = make(100_000)
    key = task_key({"task": {"source": "x"}})
    a, retry, other = Holder("a"), Holder("retry"), Holder("other")
    adm.request(a, 300, key=key)
    v = {"status": "correct", "device_memory": {"reference_mb": 50.0, "candidate_mb": 50.0, "judge_mb": 10.0}}
    adm.learn(key, v, oom=True, code="c1")
    adm.learn(key, v, oom=True, code="c1")
    adm.request(retry, adm.need(key, 300, "c1"), key=key, code="c1")   # waits for the GPU to itself
    adm.request(other, adm.need(key, 300, "c2"), key=key, code="c2")
    adm.measured(key, 2000.0)      # a holds the task's measure: the queue is re-sized, but not the retry
    assert granted == [(a, False)]
    adm.release(a)
    assert granted[1] == (retry, True)          # alone: nothing beside it
    adm.release(retry)
    assert granted[2] == (other, False)


def test_contexts_go_ahead_of_the_queue_and_are_a_down_payment():
    adm, granted, now = make(1000)
    a, b, c = Holder("a"), Holder("b"), Holder("c")
    adm.request(a, 900)
    adm.contexts(c, 50)                  # fits beside a
    adm.contexts(b, 80)                  # 950 + 80 does not: waits
    adm.request(c, 800)                  # c's whole reservation: 750 beyond its contexts, waits
    assert granted == [(a, False), (c, False)] and adm.used() == 950
    assert adm.waiting_since(b) == 0.0
    now[0] = 1.0
    adm.release(a)                       # b's contexts first, then c's 750: 80 + 50 + 750
    assert granted[2:] == [(b, False), (c, False)] and adm.used() == 880
    adm.request(b, 800)                  # 720 beyond b's contexts: does not fit yet
    now[0] = 3.0
    adm.release(c)
    assert granted[-1] == (b, False) and adm.used() == 800
    assert b.lock_stats["mem_wait"] == 3.0    # 1 s for its contexts, then 2 s for the rest
    key = "k"
    adm.asked[b] = key
    adm.measured(key, 600)               # a measure re-sizes what b holds beyond its contexts
    assert adm.used() == pytest.approx(MARGIN * 600)
    adm.release(b)
    assert adm.used() == 0 and adm.waiting_since(b) is None


def test_the_reference_comes_later_when_only_the_rest_fits():
    adm, granted, now = make(1000)
    a, b, c, d = Holder("a"), Holder("b"), Holder("c"), Holder("d")
    adm.request(a, 300, later=200)       # the whole fits: granted whole, owes nothing
    assert granted == [(a, False)] and not adm.owes(a) and adm.used() == 300
    adm.request(b, 900, later=500)       # 900 does not fit beside a; 400 without its reference does
    assert adm.used() == 700 and adm.owes(b)
    adm.request(c, 300)
    assert granted[-1] == (c, False) and adm.used() == 1000
    adm.more(b)                          # 500 more: waits, and nothing new goes before it
    adm.request(d, 50)
    assert len(granted) == 3 and adm.waiting_since(b) == 0.0
    now[0] = 2.0
    adm.release(c)                       # 700 + 500 does not fit yet
    assert len(granted) == 3
    adm.release(a)                       # b's 500 first, then d's 50
    assert granted[3:] == [(b, False), (d, False)] and not adm.owes(b)
    assert adm.used() == 950 and b.lock_stats["mem_wait"] == 2.0
    adm.more(d)                          # owes nothing: at once, for nothing
    assert granted[-1] == (d, False) and adm.used() == 950
    adm.release(b)
    adm.release(d)
    assert adm.used() == 0 and not adm.owed and adm.waiting_since(b) is None


def test_no_more_may_owe_than_can_be_paid_one_after_another():
    adm, granted, _ = make(1000)
    big, a, b, c = Holder("big"), Holder("a"), Holder("b"), Holder("c")
    adm.request(big, 600)
    adm.request(a, 500, later=300)       # 200 without its 300: owing 200, + 300 <= 1000
    adm.request(b, 500, later=300)       # owing 400, + 300: still payable
    assert adm.owes(a) and adm.owes(b) and adm.used() == 1000
    adm.release(big)
    adm.stored(300, 1)                   # 700 beside the store
    adm.request(c, 600, later=400)       # its 200 would fit, but 400 + 200 owing + 400 > 700
    assert not adm.owes(c) and len(granted) == 3
    adm.more(a)
    adm.release(a)                       # b still owes: 200 + 200 + 400 > 700
    assert not adm.owes(c) and len(granted) == 4
    adm.more(b)                          # b paid: c may owe beside it (200 + 400 <= 700)
    assert adm.owes(c) and adm.used() == 1000
    assert [h for h, _ in granted] == [big, a, b, a, b, c]


def test_holders_that_all_wait_for_their_reference_do_not_deadlock():
    adm, granted, _ = make(1000)
    a, b, c = Holder("a"), Holder("b"), Holder("c")
    adm.request(a, 600, later=500)       # alone: whole
    adm.request(b, 600, later=500)       # 100 without its reference
    adm.request(c, 600, later=500)       # likewise
    assert adm.owes(b) and adm.owes(c) and adm.used() == 800
    adm.release(a)
    adm.stored(700, 1)                   # the store grows: 900 of 1000 taken
    adm.more(b)                          # 500 more does not fit, and c still runs: b waits
    assert adm.owes(b)
    adm.more(c)                          # now no holder runs: the first is granted anyway
    assert not adm.owes(b) and adm.owes(c) and adm.used() == 1400
    adm.release(b)                       # c alone, still over the budget with the store: granted
    assert not adm.owes(c) and adm.used() == 1300
    assert [h for h, _ in granted] == [a, b, c, b, c]


def test_the_reference_share_is_learned_from_correct_runs():
    adm, _, _ = make(1000)
    key = "k"
    assert adm.later(key, 300.0) == 300.0                  # the estimate until measured
    v = {"status": "correct", "device_memory": {"reference_mb": 100.0, "candidate_mb": 120.0, "judge_mb": 30.0}}
    adm.learn(key, dict(v, status="compile_error"))
    assert adm.later(key, 300.0) == 300.0
    adm.learn(key, v)
    assert adm.later(key, 300.0) == pytest.approx(MARGIN * 100.0)
    adm.learn(key, dict(v, device_memory=dict(v["device_memory"], reference_mb=20.0)))
    assert adm.later(key, 300.0) == pytest.approx(MARGIN * 100.0)  # the largest


def test_quotas_from_the_shapes():
    mib = 1 << 20
    small = quotas_mb({"input_bytes": 100 * mib, "param_bytes": 0, "output_bytes": 10 * mib})
    assert small == {"reference": MIN_RUNNER_MB, "candidate": 2 * MIN_RUNNER_MB, "judge": 30 + 64}
    # one context per runner: the judge's buffers live in the judge service's context
    assert total_mb(small) == pytest.approx(3 * MIN_RUNNER_MB + 94 + 2 * CONTEXT_MB)
    big = quotas_mb({"input_bytes": 6000 * mib, "param_bytes": 0, "output_bytes": 1000 * mib}, check=True)
    assert big == {"reference": 14000, "judge": 3064}          # a task check has no candidate
    assert quotas_mb({"input_bytes": 1, "param_bytes": 0, "output_bytes": None}) is None


@pytest.fixture(scope="module")
def z():
    with ZygoteClient(evaluator=EVALUATOR, env={"PYTHONPATH": TESTS},
                      extra_args=["--memory-budget-mb", "1000"]) as client:
        yield client


def test_zygote_admits_by_memory(z):
    a = z.submit(TASK, "reserve 600 0.6")
    z.started(a)
    time.sleep(0.2)
    b = z.submit(TASK, "reserve 600 0.1")       # waits for a
    c = z.submit(TASK, "reserve 300 0.1")       # FIFO behind b
    va, vb, vc = (z.wait(i, 30) for i in (a, b, c))
    assert all(v["status"] == "correct" for v in (va, vb, vc)), (va, vb, vc)
    assert vb["probe"]["granted"][0] >= va["probe"]["granted"][1] - 0.05
    assert not vb["probe"]["alone"]
    assert va["probe"]["mb"] == 600.0
    giant = z.evaluate(TASK, "reserve 5000 0.1")
    assert giant["probe"]["alone"] is True and giant["probe"]["mb"] == 5000.0


def test_a_footprint_measured_mid_run_resizes_its_task_waiting_and_running():
    adm, granted, _ = make(1000)
    key, other = task_key({"task": {"source": "x"}}), task_key({"task": {"source": "y"}})
    a, b, c, d = Holder("a"), Holder("b"), Holder("c"), Holder("d")
    adm.request(a, 600, key=key)      # the group's first member, at the estimate
    adm.request(b, 600, key=key)      # waits: 1200 > 1000
    adm.request(c, 300, key=other)    # another task: FIFO behind b
    adm.request(d, 600, key=key)
    assert [h for h, _ in granted] == [a]
    adm.measured(key, 200)                          # a got through correctness using 200
    want = MARGIN * 200
    assert adm.held[a] == pytest.approx(want)       # a keeps no more than the measure
    assert [h for h, _ in granted] == [a, b, c, d]  # 3 x 230 + 300 fit in 1000
    assert adm.held[b] == adm.held[d] == pytest.approx(want) and adm.held[c] == 300
    adm.measured(key, 100)                          # a smaller measure never lowers the need
    assert adm.need(key, 600) == pytest.approx(want)
    for bad in (None, True, -1, float("nan"), "200"):
        adm.measured(other, bad)                    # a malformed word teaches nothing
    assert adm.need(other, 300) == 300
    for h in (a, b, c, d):
        adm.release(h)
    assert adm.held == {} and adm.asked == {}


def test_the_store_counts_what_it_holds_as_of_its_latest_report():
    adm, granted, _ = make(1000)
    a, b, c = Holder("a"), Holder("b"), Holder("c")
    adm.request(a, 450)
    adm.stored(400, 2)
    adm.stored(900, 1)                      # an older report arriving late changes nothing
    for bad in (-1, None, True, float("nan"), "9"):
        adm.stored(bad, 3)
    assert adm.used() == pytest.approx(850)
    adm.request(b, 200)                     # 1050 > 1000: waits for a
    assert [h for h, _ in granted] == [a]
    adm.stored(300, 3)                      # an eviction, reported with the next publish
    assert granted[-1] == (b, False) and adm.used() == pytest.approx(950)
    adm.release(a)
    adm.release(b)
    adm.request(c, 900)                     # nothing admitted: in, though not beside the store
    assert granted[-1] == (c, False)


def test_the_queue_keeps_the_order_of_arrival_not_of_asking():
    adm, granted, _ = make(1000)
    a, b1, b2, c, x = Holder("a"), Holder("b1"), Holder("b2"), Holder("c"), Holder("x")
    a.t_recv, b1.t_recv, b2.t_recv, c.t_recv = 0.0, 1.0, 2.0, 3.0
    adm.request(a, 900)
    adm.request(x, 500)          # no arrival time: last
    adm.request(c, 500)          # the next group's first member asked first ...
    adm.request(b2, 500)         # ... then the last two of the group before it
    adm.request(b1, 500)
    assert [q[0] for q in adm.queue] == [b1, b2, c, x]
    adm.release(a)
    assert [h for h, _ in granted] == [a, b1, b2]


def test_a_reservation_short_of_what_the_store_holds_asks_it_to_give_way():
    adm, granted, _ = make(1000)
    asked = []
    adm.squeeze = asked.append
    a, b, c = Holder("a"), Holder("b"), Holder("c")
    adm.stored(300, 1)
    adm.request(a, 600)
    adm.request(b, 250)                     # 1150 > 1000: 150 short, and the store holds 300
    assert asked == [150] and [h for h, _ in granted] == [a]
    adm.stored(100, 2)                      # the store gave way
    assert granted[-1] == (b, False) and adm.used() == pytest.approx(950)
    adm.request(c, 500)                     # 450 short: more than the store holds, nothing asked
    assert asked == [150]
    adm.release(a)
    assert granted[-1] == (c, False)


def test_the_store_gives_way_to_a_reservation_that_waits_for_room():
    # A zygote of its own: its judge service's store is the test's.
    with ZygoteClient(evaluator=EVALUATOR, env={"PYTHONPATH": TESTS},
                      extra_args=["--memory-budget-mb", "1000"]) as z:
        k = z.submit(TASK, "publish kept 200 8")      # a running evaluation's task: stays
        z.started(k)
        done = z.evaluate(TASK, "publish gone 200")   # a finished task's entry
        assert done["status"] == "correct" and done["probe"]["taken"], done
        time.sleep(2.2)                               # refstore.TRIM_IDLE_S
        a = z.submit(TASK, "reserve 400 3")           # 400 beside the store's 400
        z.started(a)
        time.sleep(0.3)
        b = z.submit(TASK, "reserve 300 0.1")         # fits only once "gone" has gone
        va, vb = z.wait(a, 30), z.wait(b, 30)
        assert va["status"] == vb["status"] == "correct", (va, vb)
        assert vb["probe"]["granted"][0] < va["probe"]["granted"][1] - 1.0, (va, vb)   # beside a
        again = z.evaluate(TASK, "publish kept 10")   # still held: nothing to publish
        assert again["probe"]["claimed"] is None and not again["probe"]["taken"], again
        assert z.wait(k, 30)["probe"]["taken"]


def test_zygote_grants_contexts_first_while_the_rest_waits(z):
    a = z.submit(TASK, "reserve 900 1.0")
    z.started(a)
    time.sleep(0.2)
    b = z.submit(TASK, "early 60 800 0.1")      # its contexts fit beside a; the rest does not
    va, vb = z.wait(a, 30), z.wait(b, 30)
    assert va["status"] == vb["status"] == "correct", (va, vb)
    assert vb["probe"]["contexts"][1] < va["probe"]["granted"][1] - 0.3, (va, vb)   # during a
    assert vb["probe"]["granted"][0] >= va["probe"]["granted"][1] - 0.05, (va, vb)  # after a
    assert vb["probe"]["mb"] == 800.0


def test_zygote_counts_the_store_against_its_budget():
    # A zygote of its own: what the store holds stays with it.
    with ZygoteClient(evaluator=EVALUATOR, env={"PYTHONPATH": TESTS},
                      extra_args=["--memory-budget-mb", "1000"]) as z:
        vf, vg = one_then_another(z, TASK, "reserve 400 1.0", "reserve 400 0.1")
        assert vg["probe"]["granted"][0] < vf["probe"]["granted"][1] - 0.5, (vf, vg)   # beside f
        # The store holds 700 MiB: two 400s no longer fit side by side.
        assert z.evaluate(TASK, "stored 700 1")["status"] == "correct"
        vf, vg = one_then_another(z, TASK, "reserve 400 1.0", "reserve 400 0.1")
        assert vf["status"] == vg["status"] == "correct", (vf, vg)
        assert vg["probe"]["granted"][0] >= vf["probe"]["granted"][1] - 0.05, (vf, vg)


def one_then_another(z, task, first, second):
    """Two evaluations' verdicts: the second submitted once the first has started."""
    a = z.submit(task, first)
    z.started(a)
    time.sleep(0.2)
    b = z.submit(task, second)
    return z.wait(a, 30), z.wait(b, 30)


def test_time_stopped_while_waiting_for_memory_counts_as_the_wait_only(z):
    a = z.submit(TASK, "reserve 900 2.5")
    z.started(a)
    time.sleep(0.3)
    b = z.submit(TASK, "reserve 900 0.1")         # waits for a's memory ...
    z.started(b)
    time.sleep(0.3)
    c = z.evaluate(TASK, "lock 0.8")              # ... while c's window stops both
    va, vb = z.wait(a, 30), z.wait(b, 30)
    assert c["status"] == va["status"] == vb["status"] == "correct", (c, va, vb)
    assert 0.7 <= va["stage_ms"]["lock_frozen"] / 1e3 <= 1.8, va["stage_ms"]
    assert vb["stage_ms"].get("lock_frozen", 0) < 100, vb["stage_ms"]
    assert vb["stage_ms"]["lock_mem_wait"] / 1e3 >= 1.5, vb["stage_ms"]


def test_zygote_resizes_a_group_on_its_first_measure(z):
    # A GRPO group's members arrive at once: the second waits for the first's estimate
    # only until the first says what it used.
    task = TASK + "# a task of its own: what it learns stays with it\n"
    va, vb = one_then_another(z, task, "reserve 900 1.5 200", "reserve 900 0.1")
    assert va["status"] == vb["status"] == "correct", (va, vb)
    assert vb["probe"]["granted"][0] < va["probe"]["granted"][1] - 0.5   # beside a, not after it


def test_zygote_admits_without_the_reference_then_brings_it_in(z):
    a = z.submit(TASK, "reserve 700 1.5")
    z.started(a)
    time.sleep(0.2)
    b = z.submit(TASK, "later 600 400 0.1 0.1")     # 200 fit beside a's 700; its 400 after a
    va, vb = z.wait(a, 30), z.wait(b, 30)
    assert va["status"] == vb["status"] == "correct", (va, vb)
    pa, pb = va["probe"], vb["probe"]
    assert pb["owed"] is True and pb["mb"] == 200.0
    assert pb["granted"][0] < pa["granted"][1] - 0.5, (pa, pb)           # beside a
    assert pb["more"][1] >= pa["granted"][1] - 0.05, (pa, pb)            # its reference after a
    assert pb["more_mb"] == 400.0
    c = z.evaluate(TASK, "later 600 400 0 0")                             # the whole fits: owes nothing
    assert c["probe"]["owed"] is False and c["probe"]["mb"] == 600.0 and c["probe"]["more_mb"] == 0.0


def test_the_trace_sees_every_change_with_what_is_taken():
    adm, granted, _ = make(1000)
    seen = []
    adm.trace = lambda ev, who, f: seen.append((ev, who, f["used"], f.get("mb")))
    a, b = Holder("a"), Holder("b")
    adm.stored(100, 1)
    adm.request(a, 600)
    adm.request(b, 600)            # waits: 100 + 600 + 600 > 1000
    adm.release(a)
    assert seen == [("stored", None, 100.0, None), ("request", a, 100.0, 600.0), ("grant", a, 700.0, 600.0),
                    ("request", b, 700.0, 600.0), ("release", a, 100.0, 600.0), ("grant", b, 700.0, 600.0)]


def test_zygote_writes_the_admission_log(tmp_path):
    import json
    log = tmp_path / "admission.jsonl"
    with ZygoteClient(evaluator=EVALUATOR, env={"PYTHONPATH": TESTS, "KERNELGATE_ADMISSION_LOG": str(log)},
                      extra_args=["--memory-budget-mb", "1000"]) as z:
        assert z.evaluate(TASK, "reserve 600 0.1")["status"] == "correct"
    recs = [json.loads(line) for line in log.read_text().splitlines()]
    assert recs[0]["ev"] == "start" and recs[0]["budget"] == 1000.0
    evs = [r["ev"] for r in recs[1:]]
    assert evs == ["request", "grant", "release"], recs
    grant = recs[2]
    assert grant["mb"] == 600.0 and grant["used"] == 600.0 and isinstance(grant["id"], str) and grant["t"] > 1e9

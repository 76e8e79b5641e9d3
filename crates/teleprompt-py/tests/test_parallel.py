"""Threads, processes and batches: the GIL is released while rendering,
prompts pickle by text and options, render_many renders in parallel."""

import concurrent.futures
import pickle
import random
import threading
import time

import pytest

from teleprompt import InputError, Library, Prompt, RenderError, Rendered

TASK = "Fix {{ issue.title }} ({{ issue.id }}){% for t in tags %} #{{ t }}{% endfor %}"


def shout(text):
    return text.upper()


def render_in_worker(prompt, data):
    return prompt.render(data).text


def test_pickle_round_trip_keeps_source_and_options():
    prompt = Prompt("{{ .x }}", name="raw", syntax="go", strict="lenient")
    copy = pickle.loads(pickle.dumps(prompt))
    assert (copy.name, copy.syntax, copy.strict) == ("raw", "go", "lenient")
    assert copy.render(x=1).text == "1"
    assert copy.version == prompt.version


def test_pickle_of_a_file_prompt_and_its_includes(folder):
    root = folder({"main.hbs": "{{> part}}!", "part.hbs": "hi {{who}}"})
    prompt = Prompt.from_file(root / "main.hbs")
    copy = pickle.loads(pickle.dumps(prompt))
    assert copy.render(who="Bo").text == "hi Bo!"
    assert copy.origin == prompt.origin


def test_pickle_of_a_library_and_of_its_prompts(folder):
    root = folder({"a.j2": "{{ shout('x') }}"})
    library = Library(root, functions={"shout": shout})
    copy = pickle.loads(pickle.dumps(library))
    assert copy["a"].render().text == "X"
    prompt = pickle.loads(pickle.dumps(library["a"]))
    assert prompt.render().text == "X"


def test_prompts_ship_to_a_process_pool():
    prompt = Prompt("{{ shout(word) }}", name="t.j2", functions={"shout": shout})
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        texts = list(pool.map(render_in_worker, [prompt] * 4, [{"word": w} for w in "abcd"]))
    assert texts == ["A", "B", "C", "D"]


def test_errors_come_back_from_a_process_pool():
    prompt = Prompt("{{ issue.tittle }}", name="t.j2")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        future = pool.submit(render_in_worker, prompt, {"issue": {"title": "x"}})
        with pytest.raises(RenderError) as caught:
            future.result()
    assert caught.value.line == 1


def test_threads_render_one_prompt_at_once():
    prompt = Prompt(TASK, name="t.j2")

    def work(i):
        data = {"issue": {"title": f"bug {i}", "id": i}, "tags": [str(i)] * 3}
        return [prompt.render(data).text for _ in range(200)]

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(16)))
    for i, texts in enumerate(results):
        assert set(texts) == {f"Fix bug {i} ({i}) #{i} #{i} #{i}"}


def test_the_gil_is_released_while_rendering():
    # A render of a few tenths of a second: if it held the GIL, this
    # thread could not count while it runs.
    prompt = Prompt("{% for i in range(n) %}{% for j in range(100) %}.{% endfor %}{% endfor %}", name="t.j2")
    started = time.perf_counter()
    prompt.render(n=100)
    per_row = (time.perf_counter() - started) / 100
    n = int(min(max(0.3 / per_row, 100), 10_000))  # within the step budget
    outcome = []

    def render():
        outcome.append(len(prompt.render(n=n).text))

    # A thread that held the GIL would leave ~0; a tenth of the free rate
    # (not 0.3, which a loaded 2-core machine once missed: 0.24) tells them
    # apart without depending on the machine's load.
    assert counts_while(render) > 0.1 * counting_rate() * per_row * n
    assert outcome == [n * 100]


def counting_rate():
    """How many times a second this thread counts, alone."""
    counted, deadline = 0, time.perf_counter() + 0.05
    while time.perf_counter() < deadline:
        counted += 1
    return counted / 0.05


def counts_while(work):
    """Counts in this thread from when `work` starts in another until it
    ends (not before it starts: on a busy machine the other thread may wait
    to be scheduled, and that time is not the work's)."""
    started, done = threading.Event(), threading.Event()

    def run():
        started.set()
        try:
            work()
        finally:
            done.set()

    thread = threading.Thread(target=run)
    counted = 0
    thread.start()
    started.wait()
    while not done.is_set():
        counted += 1
        time.perf_counter()  # the same loop as counting_rate's
    thread.join()
    return counted


def test_counting_tells_a_call_that_holds_the_gil():
    # The check above, on a call known to hold the GIL: sorted() of a
    # million shuffled ints (a real sort, not timsort's pass over a run).
    items = list(range(1_000_000))
    random.Random(7).shuffle(items)

    def work():
        sorted(items)

    started = time.perf_counter()
    work()
    took = time.perf_counter() - started
    assert counts_while(work) < 0.3 * counting_rate() * took


def test_render_many_in_order():
    prompt = Prompt(TASK, name="t.j2")
    rows = [{"issue": {"title": f"bug {i}", "id": i}, "tags": []} for i in range(1000)]
    for jobs in (1, 2, None):
        results = prompt.render_many(rows, jobs=jobs)
        assert all(isinstance(r, Rendered) for r in results)
        assert [r.text for r in results] == [f"Fix bug {i} ({i})" for i in range(1000)]


def test_render_many_errors():
    prompt = Prompt("{{ issue.title }}", name="t.j2")
    rows = [{"issue": {"title": "a"}}, {"issue": {}}, {"issue": {"title": "c"}}, {}]
    with pytest.raises(RenderError, match='no key "title"'):
        prompt.render_many(rows)
    results = prompt.render_many(rows, errors="return")
    assert results[0].text == "a" and results[2].text == "c"
    assert isinstance(results[1], RenderError) and isinstance(results[3], RenderError)
    with pytest.raises(InputError, match=r"rows\[1\] must be a dict"):
        prompt.render_many([{"issue": {"title": "a"}}, 5])
    with pytest.raises(InputError, match=r'rows\[0\]\["issue"\]'):
        prompt.render_many([{"issue": {1, 2}}])
    with pytest.raises(InputError, match="jobs"):
        prompt.render_many([{}], jobs=0)
    with pytest.raises(InputError, match="errors must be"):
        prompt.render_many([{}], errors="ignore")


def test_render_many_with_host_functions_on_worker_threads():
    prompt = Prompt("{{ shout(w) }}", name="t.j2", functions={"shout": shout})
    assert [r.text for r in prompt.render_many([{"w": w} for w in "xyz"], jobs=2)] == ["X", "Y", "Z"]


def test_render_many_accepts_any_iterable():
    prompt = Prompt("{{ i }}", name="t.j2")
    assert [r.text for r in prompt.render_many({"i": i} for i in range(3))] == ["0", "1", "2"]


def test_render_many_renders_rows_as_batch_does():
    # Each row is a turn's data, with one clock for the call.
    prompt = Prompt("{{ system.current_date }} {{ n }}", name="t.j2")
    results = prompt.render_many([{"n": i} for i in range(3)], now="2026-11-21T09:05:03Z")
    assert [r.text for r in results] == ["2026-11-21 0", "2026-11-21 1", "2026-11-21 2"]
    # Without `now`, every row still shares one clock.
    assert len({r.text[:10] for r in prompt.render_many([{"n": 1}] * 50)}) == 1


def test_render_many_records():
    prompt = Prompt("{{ role('system') }}Turn {{ run.turn_number }} for {{ who }}.{{ history() }}", name="t.j2")
    records = [
        {"data": {"who": "Ann"}, "turn": 2, "history": [{"role": "user", "content": "hi"}]},
        {"data": {"who": "Bo"}, "turn": 1, "now": "2026-01-01T00:00:00Z"},
        {"data": {"who": "Cy"}, "turnn": 3},
        {"data": {"who": "Di"}, "now": "yesterday"},
    ]
    results = prompt.render_many(records, rows_are="records", errors="return")
    assert results[0].to_openai()["messages"] == [
        {"role": "system", "content": "Turn 2 for Ann."},
        {"role": "user", "content": "hi"},
    ]
    assert results[1].text.startswith("Turn 1 for Bo.")
    assert isinstance(results[2], InputError) and "turnn" in str(results[2])
    assert isinstance(results[3], InputError) and "rows[3]: now" in str(results[3])
    with pytest.raises(InputError, match="rows_are"):
        prompt.render_many([], rows_are="lines")


def test_render_many_returns_rows_that_are_not_data_in_place():
    prompt = Prompt("{{ x }}", name="t.j2")
    results = prompt.render_many([{"x": 1}, {"x": float("inf")}, 7, {"x": 2}], errors="return")
    assert results[0].text == "1" and results[3].text == "2"
    assert isinstance(results[1], InputError) and results[1].path == 'rows[1]["x"]'
    assert isinstance(results[2], InputError) and "rows[2] must be a dict" in str(results[2])

"""Source maps and stable prefixes from Python: a turn rendered with
``source_map=True`` says which template span and which data path wrote
each byte; ``stable_prefix`` says what a turn keeps of the one before and
where the first change was written."""

from teleprompt import Prompt, PromptContext

SOURCE = (
    "---\nsyntax: go\n---\n"
    '{{ role "system" }}Turn {{ .run.turn_number }}. Triage {{ .issue.title }}.{{ history }}'
)


def turn(prompt, number, source_map=True):
    context = PromptContext({"issue": {"title": "Crash on start"}}, turn=number)
    return prompt.render_turn(context, source_map=source_map)


def test_a_turn_maps_every_byte_to_its_template_span_and_data_path():
    prompt = Prompt(SOURCE, name="agent.md")
    rendered = turn(prompt, 2)
    source_map = rendered.source_map()
    assert source_map is not None
    part = source_map["messages"][0]["parts"][0]
    assert part["text"] == "Turn 2. Triage Crash on start."
    # Covered whole, in order.
    ends = [(segment["start"], segment["end"]) for segment in part["segments"]]
    assert ends[0][0] == 0 and ends[-1][1] == len(part["text"].encode())
    assert all(a[1] == b[0] for a, b in zip(ends, ends[1:]))
    values = [
        (part["text"][s["start"] : s["end"]], source_map["paths"][s["path"]])
        for s in part["segments"]
        if s["kind"] == "value"
    ]
    assert values == [("2", "run.turn_number"), ("Crash on start", "issue.title")]
    span = source_map["spans"][part["segments"][1]["span"]]
    assert (span["file"], span["line"], span["column"]) == ("agent.md", 4, 25)
    assert span["source"] == "{{ .run.turn_number }}"
    # Not asked for: none.
    assert turn(prompt, 2, source_map=False).source_map() is None


def test_the_stable_prefix_names_the_first_change():
    prompt = Prompt(SOURCE, name="agent.md")
    first, second = turn(prompt, 1), turn(prompt, 2)
    prefix = second.stable_prefix(first)
    assert prefix["bytes"] == len("Turn ")
    assert prefix["through_history"] is False
    change = prefix["change"]
    assert (change["message"], change["offset"], change["path"]) == (0, 5, "run.turn_number")
    assert change["span"]["line"] == 4
    same = second.stable_prefix(second)
    assert same["change"] is None and same["through_history"] is True

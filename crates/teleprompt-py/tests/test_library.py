"""Library: a folder of prompts by name, reloadable."""

import pytest

from teleprompt import Library, ParseError


def test_prompts_by_name(folder):
    root = folder({"triage.j2": "Triage {{ issue }}", "persona.hbs": "I am {{name}}", "notes.txt": "not a prompt"})
    library = Library(root)
    assert sorted(library) == ["persona", "triage"]
    assert len(library) == 2
    assert "triage" in library and "notes" not in library
    assert library["triage"].render(issue="A-1").text == "Triage A-1"
    assert library.render("persona", name="Ava").text == "I am Ava"
    assert library.get("nope") is None
    assert library.errors == []
    assert "2 prompts" in repr(library)


def test_a_missing_name_suggests_the_closest(folder):
    library = Library(folder({"triage.j2": "x"}))
    with pytest.raises(KeyError, match='did you mean "triage"'):
        library["triag"]


def test_a_broken_file_raises_its_own_error(folder):
    library = Library(folder({"good.j2": "ok", "bad.j2": "{{ x | uper }}"}))
    assert list(library) == ["good"]
    [error] = library.errors
    assert isinstance(error, ParseError)
    with pytest.raises(ParseError, match="uper"):
        library["bad"]


def test_reload_sees_new_changed_and_removed_files(folder):
    root = folder({"a.j2": "one", "b.j2": "bee"})
    library = Library(root)
    taken = library["a"]
    (root / "a.j2").write_text("two")
    (root / "c.j2").write_text("sea")
    (root / "b.j2").unlink()
    report = library.reload()
    assert report["added"] == ["c"]
    assert report["updated"] == ["a"]
    assert report["removed"] == ["b"]
    assert report["failed"] == []
    assert library["a"].render().text == "two"
    # A prompt taken before the reload keeps its version.
    assert taken.render().text == "one"


def test_includes_resolve_in_the_folder(folder):
    root = folder({"main.j2": "{% include 'part.j2' %}!", "part.j2": "hi {{ who }}"})
    assert Library(root)["main"].render(who="Bo").text == "hi Bo!"


def test_a_folder_that_cannot_be_read_raises(tmp_path):
    with pytest.raises(Exception):
        Library(tmp_path / "missing")


def wait_for(condition, seconds=10.0):
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_watched_library_reloads_by_itself(folder):
    import threading
    import time

    root = folder({"a.j2": "one"})
    heard = []
    changed = threading.Event()

    def on_reload(report):
        heard.append(report)
        changed.set()

    library = Library(root, watch=0.05, on_reload=on_reload)
    assert library.watching
    (root / "b.j2").write_text("bee")
    assert wait_for(lambda: "b" in library), "the new file was not picked up"
    assert changed.wait(10)
    assert any(report["added"] == ["b"] for report in heard)
    (root / "b.j2").write_text("{{ x | uper }}")
    assert wait_for(lambda: any(report["failed"] for report in heard))
    assert library["b"].render().text == "bee"  # the last good version
    # The watcher settles: no more reports while nothing changes (a reload
    # reads every file, and reading is not a change).
    settled = len(heard)
    time.sleep(0.5)
    assert len(heard) == settled, heard[settled:]
    library.close()
    assert not library.watching
    (root / "c.j2").write_text("sea")
    assert not wait_for(lambda: "c" in library, seconds=0.5)


def test_watch_arguments(folder):
    root = folder({"a.j2": "one"})
    assert not Library(root, watch=False).watching
    assert Library(root, watch=True).watching
    with pytest.raises(Exception, match="watch must be"):
        Library(root, watch=-1)


def test_a_callback_that_refers_to_its_library_is_collected(folder):
    import gc
    import time

    root = folder({"a.j2": "one"})
    heard = []

    def make_a_cycle():
        holder = {}
        holder["library"] = Library(root, watch=0.05, on_reload=lambda report: heard.append((holder["library"], report)))
        (root / "b.j2").write_text("bee")
        assert wait_for(lambda: heard)
        # Returning leaves library -> callback -> holder -> library, and nothing else.

    make_a_cycle()
    heard.clear()
    gc.collect()
    (root / "c.j2").write_text("sea")
    time.sleep(0.5)
    assert heard == [], "the collected library still reloads"

"""Errors: one exception hierarchy, each error placed in its file."""

import errno
import os
import pickle

import pytest

from teleprompt import (
    DocumentError,
    FileError,
    FilePermissionError,
    InputError,
    MissingFileError,
    ParseError,
    Prompt,
    RenderError,
    TelepromptError,
)


def test_missing_key_names_file_line_column_path_and_suggestion():
    prompt = Prompt("---\nsyntax: jinja\n---\nFix {{ issue.tittle }}.\n", name="task.md")
    with pytest.raises(RenderError) as caught:
        prompt.render(issue={"title": "the form"})
    error = caught.value
    assert isinstance(error, TelepromptError)
    assert error.rule == "render"
    assert error.file == "task.md"
    assert (error.line, error.column) == (4, 8)
    assert error.path == "issue.tittle"
    assert error.suggestion == 'did you mean "issue.title"?'
    assert error.message == 'issue has no key "tittle"'
    assert str(error).startswith('task.md:4:8: issue has no key "tittle"')
    report = error.report()
    assert "--> task.md:4:8" in report
    assert "Fix {{ issue.tittle }}." in report
    assert "^" in report
    assert error.to_dict()["line"] == 4


@pytest.mark.parametrize(
    "name, source, path",
    [
        ("t.hbs", "{{issue.tittle}}", "issue.tittle"),
        ("t.gotmpl", "{{.issue.tittle}}", "issue.tittle"),
        ("t.j2", "{{ isue }}", "isue"),
    ],
)
def test_path_in_every_syntax(name, source, path):
    with pytest.raises(RenderError) as caught:
        Prompt(source, name=name).render(issue={"title": "x"})
    assert caught.value.path == path


def test_parse_error():
    with pytest.raises(ParseError) as caught:
        Prompt("{{ x | uper }}", name="t.j2")
    assert caught.value.rule == "parse/unknown-filter"
    assert caught.value.code == "TP0101"
    assert caught.value.to_dict()["code"] == "TP0101"
    assert caught.value.suggestion == 'did you mean "upper"?'
    assert caught.value.line == 1


def test_document_error():
    with pytest.raises(DocumentError):
        Prompt("---\nsyntax: [\n---\nx", name="t.md")


def test_file_error_is_also_an_os_error(tmp_path):
    with pytest.raises(FileError) as caught:
        Prompt.from_file(tmp_path / "missing.j2")
    assert isinstance(caught.value, OSError)
    assert "missing.j2" in str(caught.value)


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    missing = tmp_path / "missing.j2"
    with pytest.raises(FileNotFoundError) as caught:
        Prompt.from_file(missing)
    error = caught.value
    assert isinstance(error, MissingFileError) and isinstance(error, FileError)
    assert error.errno == errno.ENOENT and error.filename == str(missing)
    assert (error.rule, error.code) == ("io/not-found", "TP0501")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is MissingFileError and copy.errno == errno.ENOENT


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_a_permission_error(tmp_path):
    locked = tmp_path / "locked.j2"
    locked.write_text("x")
    locked.chmod(0)
    with pytest.raises(PermissionError) as caught:
        Prompt.from_file(locked)
    assert isinstance(caught.value, FilePermissionError)
    assert caught.value.errno == errno.EACCES


def test_bad_options_are_input_errors():
    with pytest.raises(InputError, match="syntax"):
        Prompt("x", syntax="jinja3")
    with pytest.raises(InputError, match="strict"):
        Prompt("x", strict="very")


def test_errors_pickle_with_their_fields():
    with pytest.raises(RenderError) as caught:
        Prompt("{{ a.b }}", name="t.j2").render(a={})
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is RenderError
    assert (copy.file, copy.line, copy.path) == ("t.j2", 1, "a.b")
    assert copy.report() == caught.value.report()


def test_a_template_that_loops_forever_is_stopped():
    prompt = Prompt("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}", name="t.j2")
    with pytest.raises(RenderError):
        prompt.render()


def test_an_error_made_in_python_reports_as_the_library_does():
    from teleprompt import RenderError

    error = RenderError(
        'issue has no key "titel"',
        rule="render",
        code="TP0300",
        file="triage.j2",
        line=12,
        column=11,
        suggestion='did you mean "issue.title"?',
    )
    assert error.report() == (
        'error[TP0300]: issue has no key "titel"\n'
        " --> triage.j2:12:11\n"
        '  = help: did you mean "issue.title"?\n'
    )
    assert RenderError("boom", rule="render").report() == "error[render]: boom\n"

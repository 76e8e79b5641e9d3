"""The exceptions teleprompt raises.

Every error is a :class:`TelepromptError`; its subclass tells when it
happened: reading the file (:class:`DocumentError`, :class:`FileError`),
compiling the template (:class:`ParseError`), rendering it
(:class:`RenderError`), or taking the host's input (:class:`InputError`:
data that is not data, a malformed history, a bad option).
"""

from __future__ import annotations

import errno
import os
from typing import Any, Dict, Optional

__all__ = [
    "TelepromptError",
    "DocumentError",
    "FileError",
    "MissingFileError",
    "FilePermissionError",
    "ParseError",
    "RenderError",
    "InputError",
]


class TelepromptError(Exception):
    """A teleprompt error, with where it is and what to try.

    ``str(error)`` is one line (``file:line:col: message``);
    :meth:`report` is the caret report the command-line tool prints.
    """

    #: The stable rule id, such as ``"render"`` or ``"parse/unknown-filter"``.
    rule: str
    #: The stable code of the rule, such as ``"TP0101"``
    #: (``teleprompt explain TP0101`` says what it means).
    code: str
    #: The file (or prompt name) the error is in.
    file: Optional[str]
    #: 1-based line in ``file``.
    line: Optional[int]
    #: 1-based column (in characters) in ``file``.
    column: Optional[int]
    #: For a missing key or variable: the data path the template read, such
    #: as ``"issue.tittle"``.
    path: Optional[str]
    #: The expression that failed, as written.
    action: Optional[str]
    #: A fix to try, such as ``'did you mean "issue.title"?'``.
    suggestion: Optional[str]
    #: The host's labels of the render (``PromptContext(labels=…)``).
    labels: Dict[str, str]

    def __init__(
        self,
        message: str,
        *,
        rule: str = "",
        code: str = "",
        file: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        path: Optional[str] = None,
        action: Optional[str] = None,
        suggestion: Optional[str] = None,
        labels: Optional[Dict[str, str]] = None,
        report: Optional[str] = None,
        details: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.action = action
        self.suggestion = suggestion
        self.labels = dict(labels or {})
        self._report = report
        self._details = details

    def report(self) -> str:
        """The multi-line report: headline, ``--> file:line:col``, the
        source line with a caret under the problem, and the suggestion."""
        if self._report is not None:
            return self._report
        # An error made in Python (not raised by the library): its
        # headline as the library writes it, without the source line.
        place = ":".join(str(part) for part in (self.file, self.line, self.column) if part)
        where = f"\n --> {place}" if self.file else ""
        help = f"\n  = help: {self.suggestion}" if self.suggestion else ""
        return f"error[{self.code or self.rule}]: {self.message}{where}{help}\n"

    def to_dict(self) -> Dict[str, Any]:
        """The error as the JSON object ``teleprompt serve`` and
        ``teleprompt batch`` write."""
        if self._details is not None:
            return dict(self._details)
        return {
            "rule": self.rule,
            "code": self.code,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "help": self.suggestion,
            "labels": dict(self.labels),
        }

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}:{self.column}"
            where += ": "
        text = f"{where}{self.message}"
        if self.action:
            text += f" at <{self.action}>"
        if self.suggestion:
            text += f" ({self.suggestion})"
        return text

    def __reduce__(self):  # errors cross process boundaries (multiprocessing, Ray)
        return (
            _rebuild,
            (
                type(self),
                self.message,
                {
                    "rule": self.rule,
                    "code": self.code,
                    "file": self.file,
                    "line": self.line,
                    "column": self.column,
                    "path": self.path,
                    "action": self.action,
                    "suggestion": self.suggestion,
                    "labels": self.labels,
                    "report": self._report,
                    "details": self._details,
                },
            ),
        )


def _rebuild(cls, message, fields):
    return cls(message, **fields)


class DocumentError(TelepromptError):
    """The prompt file is malformed: front matter, options, encoding."""


class FileError(TelepromptError, OSError):
    """A file could not be read: missing, too large, outside the include root."""

    def __init__(self, message: str, **fields: Any) -> None:
        TelepromptError.__init__(self, message, **fields)

    def __str__(self) -> str:
        return TelepromptError.__str__(self)


class _FileOSError(FileError):
    """A :class:`FileError` the operating system refused with ``_errno``:
    ``errno``, ``strerror`` and ``filename`` set as an ``OSError`` has them."""

    _errno = 0

    def __init__(self, message: str, **fields: Any) -> None:
        FileError.__init__(self, message, **fields)
        self.errno = self._errno
        self.strerror = os.strerror(self._errno)
        self.filename = self.file


class MissingFileError(_FileOSError, FileNotFoundError):
    """A file that does not exist: also a :class:`FileNotFoundError`, with
    ``errno`` ``ENOENT`` and ``filename`` the file."""

    _errno = errno.ENOENT


class FilePermissionError(_FileOSError, PermissionError):
    """A file that may not be read: also a :class:`PermissionError`, with
    ``errno`` ``EACCES`` and ``filename`` the file."""

    _errno = errno.EACCES


class ParseError(TelepromptError):
    """The template does not compile: syntax, unknown filters or functions,
    a missing include."""


class RenderError(TelepromptError):
    """Rendering failed: missing data (see :attr:`path`), a type error, a
    host function that raised (its exception is the ``__cause__``), a limit."""


class InputError(TelepromptError):
    """The host's input is unusable: data that is not data (see
    :attr:`path`), a malformed history, a bad option."""

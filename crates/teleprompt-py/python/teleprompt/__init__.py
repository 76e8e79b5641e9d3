"""teleprompt renders the prompts of LLM agents: prompt files (YAML front
matter + a Jinja, Go text/template or Handlebars body), strictly — a
misspelled variable is an error naming the file, line and column and the
closest name that exists — and fast, in Rust, without the GIL.

    >>> from teleprompt import Prompt
    >>> prompt = Prompt("Fix {{ issue.title }}.", name="task.j2")
    >>> prompt.render(issue={"title": "the login form"}).text
    'Fix the login form.'
"""

from ._teleprompt import Library, Prompt, PromptContext, Rendered, TokenCache, __version__
from .errors import (
    DocumentError,
    FileError,
    FilePermissionError,
    InputError,
    MissingFileError,
    ParseError,
    RenderError,
    TelepromptError,
)

__all__ = [
    "Prompt",
    "Library",
    "PromptContext",
    "Rendered",
    "TokenCache",
    "TelepromptError",
    "DocumentError",
    "FileError",
    "MissingFileError",
    "FilePermissionError",
    "ParseError",
    "RenderError",
    "InputError",
    "__version__",
]

"""Type stubs of the native module (its classes are re-exported by `teleprompt`)."""

import datetime
import os
from typing import Any, Callable, ClassVar, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Union, overload

from .errors import TelepromptError

__version__: str

#: JSON-like data: what a render accepts.
Data = Union[None, bool, int, float, str, Sequence["Data"], Mapping[str, "Data"]]
#: Host functions: a callable, or a plugin (a dict of callables).
Functions = Mapping[str, Union[Callable[..., Any], Mapping[str, Callable[..., Any]]]]
StrPath = Union[str, os.PathLike[str]]

class Rendered:
    """The result of a render. It pickles (a copy answers as it does), and
    two results are equal when everything they hold is."""

    def __eq__(self, other: object) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

    @property
    def text(self) -> str:
        """The rendered text."""
    @property
    def messages(self) -> List[Dict[str, Any]]:
        """The messages (history messages as they came; rendered ones with content parts)."""
    @property
    def warnings(self) -> List[str]:
        """What the host should know (args hidden by a namespace, dropped keys)."""
    def to_openai(self) -> Dict[str, Any]:
        """An OpenAI chat completions body: ``{"messages": [...]}``."""
    def to_anthropic(self) -> Dict[str, Any]:
        """An Anthropic Messages body: ``{"system": ..., "messages": [...]}``."""
    def to_bedrock(self) -> Dict[str, Any]:
        """An Amazon Bedrock Converse body: ``{"system": [...], "messages": [...]}``."""
    def source_map(self) -> Optional[Dict[str, Any]]:
        """Where each byte came from (a turn rendered with ``source_map=True``):
        ``{"messages", "spans", "paths"}``; None otherwise."""
    def stable_prefix(self, previous: "Rendered") -> Dict[str, Any]:
        """How much of ``previous`` this turn keeps at its start, and its first change."""
    def tokens(self, cache: Optional["TokenCache"] = None) -> Dict[str, Any]:
        """Each message's token count and ids, by the prompt's tokenizer; with
        ``cache``, only what changed since the previous turn is encoded."""
    @property
    def budget(self) -> Optional[Dict[str, Any]]:
        """What the prompt's `budget:` cut from this turn (None without one)."""

class TokenCache:
    """The previous turn's tokens: pass one per conversation to
    :meth:`Rendered.tokens` and each turn encodes only what it changed."""

    def __init__(self) -> None: ...

class PromptContext:
    """The context of one turn, for :meth:`Prompt.render_turn`. It pickles:
    a copy renders the same."""

    def __init__(
        self,
        data: Optional[Mapping[str, Data]] = None,
        *,
        history: Optional[Sequence[Mapping[str, Any]]] = None,
        now: Union[None, str, datetime.datetime] = None,
        time_zone: Optional[str] = None,
        turn: Optional[int] = None,
        max_turns: Optional[int] = None,
        attempt: Optional[int] = None,
        assistant: Optional[Mapping[str, Data]] = None,
        conversation: Optional[Mapping[str, Data]] = None,
        session: Optional[Mapping[str, Data]] = None,
        message: Optional[Mapping[str, Data]] = None,
        args: Optional[Mapping[str, Data]] = None,
        custom_rules: Optional[str] = None,
        client_language: Optional[str] = None,
        labels: Optional[Mapping[str, Any]] = None,
    ) -> None: ...
    def with_turn(self, turn: int, attempt: Optional[int] = None) -> "PromptContext":
        """The same context at another turn."""
    def with_history(self, history: Sequence[Mapping[str, Any]]) -> "PromptContext":
        """The same context with another history."""
    def append(self, message: Mapping[str, Any]) -> None:
        """Adds a message to the history (only it is checked)."""
    def extend(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Adds messages to the history, in order."""
    @property
    def turn(self) -> int: ...
    @property
    def history(self) -> List[Dict[str, Any]]: ...

class Prompt:
    """A compiled prompt: load it once, render it many times, from any thread."""

    def __init__(
        self,
        source: str,
        name: str = "prompt",
        *,
        syntax: Optional[Literal["jinja", "django", "chat-template", "go", "handlebars"]] = None,
        strict: Optional[Literal["strict", "semi", "lenient"]] = None,
        functions: Optional[Functions] = None,
        include_root: Optional[StrPath] = None,
        tokenizer: Optional[str] = None,
    ) -> None: ...
    @staticmethod
    def from_file(
        path: StrPath,
        *,
        syntax: Optional[Literal["jinja", "django", "chat-template", "go", "handlebars"]] = None,
        strict: Optional[Literal["strict", "semi", "lenient"]] = None,
        functions: Optional[Functions] = None,
        include_root: Optional[StrPath] = None,
        tokenizer: Optional[str] = None,
    ) -> "Prompt": ...
    def render(self, data: Optional[Mapping[str, Data]] = None, **kwargs: Data) -> Rendered:
        """Renders with ``data`` and keyword arguments over it."""
    def render_turn(
        self,
        context: PromptContext,
        *,
        validate_history: bool = True,
        timeout: Optional[float] = None,
        source_map: bool = False,
    ) -> Rendered:
        """Renders one turn of a conversation; `timeout` (seconds) stops a longer render."""
    @overload
    def render_many(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        jobs: Optional[int] = None,
        errors: Literal["raise"] = "raise",
        rows_are: Literal["data", "records"] = "data",
        now: Union[None, str, datetime.datetime] = None,
        time_zone: Optional[str] = None,
        timeout: Optional[float] = None,
        tokenize: Literal[False] = False,
    ) -> List[Rendered]:
        """Renders every row in parallel, as `teleprompt batch` renders a row."""
    @overload
    def render_many(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        jobs: Optional[int] = None,
        errors: Literal["return"],
        rows_are: Literal["data", "records"] = "data",
        now: Union[None, str, datetime.datetime] = None,
        time_zone: Optional[str] = None,
        timeout: Optional[float] = None,
        tokenize: Literal[False] = False,
    ) -> List[Union[Rendered, TelepromptError]]: ...
    @overload
    def render_many(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        jobs: Optional[int] = None,
        errors: Literal["raise"] = "raise",
        rows_are: Literal["data", "records"] = "data",
        now: Union[None, str, datetime.datetime] = None,
        time_zone: Optional[str] = None,
        timeout: Optional[float] = None,
        tokenize: Literal[True],
    ) -> List[Dict[str, Any]]:
        """Each row's tokens (`Rendered.tokens()`), counted in parallel."""
    @overload
    def render_many(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        jobs: Optional[int] = None,
        errors: Literal["return"],
        rows_are: Literal["data", "records"] = "data",
        now: Union[None, str, datetime.datetime] = None,
        time_zone: Optional[str] = None,
        timeout: Optional[float] = None,
        tokenize: Literal[True],
    ) -> List[Union[Dict[str, Any], TelepromptError]]: ...
    @overload
    def render_many(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        jobs: Optional[int] = None,
        errors: Literal["raise", "return"] = "raise",
        rows_are: Literal["data", "records"] = "data",
        now: Union[None, str, datetime.datetime] = None,
        time_zone: Optional[str] = None,
        timeout: Optional[float] = None,
        tokenize: bool = False,
    ) -> List[Union[Rendered, Dict[str, Any], TelepromptError]]:
        """With ``errors`` or ``tokenize`` known only when the program runs."""
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> Optional[str]: ...
    @property
    def syntax(self) -> str: ...
    @property
    def strict(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def metadata(self) -> Dict[str, Any]: ...
    @property
    def included_files(self) -> List[os.PathLike[str]]: ...
    @property
    def warnings(self) -> List[str]: ...

class Library:
    """The prompt files of a folder, by name."""

    def __init__(
        self,
        dir: StrPath,
        *,
        syntax: Optional[str] = None,
        strict: Optional[str] = None,
        functions: Optional[Functions] = None,
        include_root: Optional[StrPath] = None,
        watch: Union[bool, float, None] = None,
        on_reload: Optional[Callable[[Any], None]] = None,
        tokenizer: Optional[str] = None,
    ) -> None: ...
    def __getitem__(self, name: str) -> Prompt: ...
    def __contains__(self, name: object) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def get(self, name: str, default: Any = None) -> Optional[Prompt]: ...
    def names(self) -> List[str]: ...
    @property
    def errors(self) -> List[TelepromptError]: ...
    @property
    def dir(self) -> os.PathLike[str]: ...
    def reload(self) -> Dict[str, List[Any]]:
        """Reads the folder again: ``{"added", "updated", "removed", "failed"}``."""
    def render(self, name: str, /, data: Optional[Mapping[str, Data]] = None, **kwargs: Data) -> Rendered: ...
    @property
    def watching(self) -> bool:
        """Whether the library reloads by itself (``watch=``)."""
    def close(self) -> None:
        """Stops the watching; the library keeps serving what it has."""

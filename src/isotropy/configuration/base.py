"""What every configuration section shares (:class:`Section`) and the one walk of its types."""

from __future__ import annotations

import copy
import re
import types
import typing
from collections.abc import Hashable, Iterator, Mapping
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

# numpy.finfo(numpy.float32).max, without importing numpy here: a learning rate beyond it
# overflows every float32 weight at the first update.
FLOAT32_MAX = 3.4028234663852886e38
# A field the configuration may leave out, and which then stays out (no default is filled in).
ABSENT_KEY = "x-absent"


def _unique(items: list) -> list:
    """``items`` when none is listed twice, in linear time; an unhashable item by its repr."""
    seen: set[Any] = set()
    repeated: set[str] = set()
    for item in items:
        key = item if isinstance(item, Hashable) else repr(item)
        if key in seen:
            repeated.add(repr(item))
        seen.add(key)
    if repeated:
        raise ValueError(f"lists {', '.join(sorted(repeated))} more than once; list each once")
    return items


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


# < > close a <script> or open a tag; ` opens or closes reStructuredText literals, roles and
# links; | a substitution; control characters (line breaks above all) start a new RST line.
MARKUP_CHARACTERS = re.compile(r"[<>`|\x00-\x1f\x7f]")
# An explicit markup start (.. include:: / .. raw::) or a field list (:file:) in one line.
RST_DIRECTIVE = re.compile(r"(^|\s)\.\.(\s|$)|::")
# docutils turns a bare scheme:... into a link; these schemes run code in a browser.
SCRIPT_URL = re.compile(r"\b(javascript|vbscript|data)\s*:", re.IGNORECASE)


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot appear in the report (None: it is plain text)."""
    if match := MARKUP_CHARACTERS.search(text):
        return f"holds the character {match.group()!r}"
    if RST_DIRECTIVE.search(text):
        return "holds reStructuredText markup ('..' alone or '::')"
    if match := SCRIPT_URL.search(text):
        return f"holds a {match.group(1).lower()}: URL"
    return None


T = TypeVar("T")
Unique = Annotated[list[T], AfterValidator(_unique), Field(json_schema_extra={"uniqueItems": True})]
Seed = Annotated[int, Field(ge=0, le=4294967295)]  # numpy and torch take 32-bit seeds
Seeds = Annotated[Unique[Seed], Field(min_length=1)]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}\Z")]
Commit = Annotated[str, Field(pattern=r"^[0-9a-f]{40}\Z")]
# A folder name of result paths: `.` and `..` would name the folder itself or the one above.
FolderName = Annotated[str, Field(pattern=r"^(?!\.+\Z)[A-Za-z0-9_.-]+\Z")]


def _below_float32_max(rate: float) -> float:
    if rate >= FLOAT32_MAX:
        raise ValueError(
            f"{rate:g} is beyond float32's range ({FLOAT32_MAX:.3g}): every float32 weight would "
            "overflow at the first update and the run diverge; lower the learning rate"
        )
    return rate


LearningRate = Annotated[float, Field(gt=0), AfterValidator(_below_float32_max)]


def optional(description: str | None = None, **constraints: Any) -> Any:
    """A field without a default: left out, it stays out of the configuration."""
    return Field(None, description=description, json_schema_extra={ABSENT_KEY: True}, **constraints)


def is_absent(field: FieldInfo) -> bool:
    extra = field.json_schema_extra
    return isinstance(extra, dict) and bool(extra.get(ABSENT_KEY))


class Section(BaseModel):
    """One configuration section. A variant lists in ``DEFAULTS`` only the defaults it changes;
    a key holding a section without a description of its own takes the section's docstring."""

    model_config = ConfigDict(
        extra="forbid", strict=True, allow_inf_nan=False, regex_engine="python-re"
    )
    DEFAULTS: ClassVar[dict[str, Any]] = {}
    # Its rules record it as one parameter (whose repr Snakemake compares): keys in field order.
    WHOLE: ClassVar[bool] = False

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        defaults, changed = cls.__dict__.get("DEFAULTS", {}), False
        for name, field in list(cls.__pydantic_fields__.items()):
            kind, below = nested(field.annotation)
            doc = below.__doc__ if isinstance(below, type) and not kind else None
            described = field.description is None and doc is not None
            if name in defaults or described:
                field = copy.copy(field)
                field.default = defaults.get(name, field.default)
                if described:
                    field.description = " ".join(str(doc).split())
                cls.__pydantic_fields__[name], changed = field, True
        if changed:
            cls.model_rebuild(force=True)

    @field_validator("*")
    @classmethod
    def _fits_64_bits_and_is_plain_text(cls, value: Any) -> Any:
        for leaf in _leaves(value):
            # numpy and torch overflow on larger integers; JSON schema and Python have no limit
            if isinstance(leaf, int) and not isinstance(leaf, bool) and abs(leaf) >= 2**63:
                raise ValueError(
                    "holds an integer that does not fit in 64 bits; give a realistic value"
                )
            if isinstance(leaf, str) and (problem := text_problem(leaf)) is not None:
                raise ValueError(
                    f"{leaf[:60]!r} {problem}, which the report would render as markup; use "
                    "plain names and paths (letters, digits, . _ - / : and spaces)"
                )
        return value

    @classmethod
    def default(cls, name: str) -> Any:
        field = cls.model_fields[name]
        if field.default_factory is not None:
            return {}
        return copy.deepcopy(field.default)


NAME, ITEM = "<name>", "[]"


def nested(annotation: Any) -> tuple[str, Any]:
    """Where the keys below a field live: ("", sections), (NAME, a map's), (ITEM, a list's)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated or (
        origin in (typing.Union, types.UnionType) and type(None) in args and len(args) == 2
    ):
        return nested(next(arg for arg in args if arg is not type(None)))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "", annotation
    if origin in (typing.Union, types.UnionType):
        members = tuple(member for arg in args if (member := nested(arg)[1]) is not None)
        return "", members or None
    if origin in (dict, list) and nested(args[-1])[1]:
        return (NAME if origin is dict else ITEM), nested(args[-1])[1]
    return "", None


def fields_of(models: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for model in models if isinstance(models, tuple) else (models,):
        for name, field in model.model_fields.items():
            found.setdefault(name, field)
    return found


def _member(models: Any, mapping: Mapping) -> type[Section] | None:
    """The section of ``models`` (one, or a union's) that ``mapping`` is, by its ``kind``."""
    for model in models if isinstance(models, tuple) else (models,):
        kind = model.model_fields.get("kind")
        if kind is None or mapping.get("kind") in typing.get_args(kind.annotation):
            return model
    return None


def sections(
    model: type[Section], mapping: dict, key: str = ""
) -> Iterator[tuple[str, type[Section], dict]]:
    """(dotted key, section, its mapping) of ``mapping`` and every section inside it, outer first
    (a caller may fill it in first)."""
    yield key, model, mapping
    for name, field in model.model_fields.items():
        kind, below = nested(field.annotation)
        value, where = mapping.get(name), f"{key}.{name}" if key else name
        if below is None or value is None:
            continue
        if kind == NAME and isinstance(value, dict):
            items = [(f"{where}.{entry}", item) for entry, item in value.items()]
        elif kind == ITEM and isinstance(value, list):
            items = [(f"{where}[{index}]", item) for index, item in enumerate(value)]
        else:
            items = [] if kind else [(where, value)]
        for path, item in items:
            if isinstance(item, dict) and (section := _member(below, item)) is not None:
                yield from sections(section, item, path)

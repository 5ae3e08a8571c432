"""What every configuration section shares: strict types, no unknown key, finite numbers that
fit in 64 bits, and defaults a variant section overrides one by one (:class:`Section`)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

# numpy.finfo(numpy.float32).max, without importing numpy here: a learning rate beyond it
# overflows every float32 weight at the first update.
FLOAT32_MAX = 3.4028234663852886e38
# A field the configuration may leave out, and which then stays out (no default is filled in).
ABSENT_KEY = "x-absent"


def _unique(items: list) -> list:
    repeated = sorted({repr(item) for item in items if items.count(item) > 1})
    if repeated:
        raise ValueError(f"lists {', '.join(repeated)} more than once; list each once")
    return items


def _ints(value: Any) -> Iterator[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _ints(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _ints(item)


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


def optional(description: str, **constraints: Any) -> Any:
    """A field without a default: left out, it stays out of the configuration."""
    return Field(None, description=description, json_schema_extra={ABSENT_KEY: True}, **constraints)


def is_absent(field: FieldInfo) -> bool:
    """Whether ``field`` was made by :func:`optional`."""
    extra = field.json_schema_extra
    return isinstance(extra, dict) and bool(extra.get(ABSENT_KEY))


class Section(BaseModel):
    """One configuration section. A variant lists in ``DEFAULTS`` only the defaults it changes;
    each field keeps its type, bounds and description from the section it derives from."""

    model_config = ConfigDict(
        extra="forbid", strict=True, allow_inf_nan=False, regex_engine="python-re"
    )
    DEFAULTS: ClassVar[dict[str, Any]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        changed = cls.__dict__.get("DEFAULTS", {})
        for name, value in changed.items():
            field = copy.copy(cls.__pydantic_fields__[name])
            field.default = value
            cls.__pydantic_fields__[name] = field
        if changed:
            cls.model_rebuild(force=True)

    @field_validator("*")
    @classmethod
    def _fits_64_bits(cls, value: Any) -> Any:
        # numpy and torch overflow on larger integers; JSON schema and Python have no limit
        if any(abs(number) >= 2**63 for number in _ints(value)):
            raise ValueError(
                "holds an integer that does not fit in 64 bits; give a realistic value"
            )
        return value

    @classmethod
    def default(cls, name: str) -> Any:
        """The default of field ``name`` (a copy, which the caller may change)."""
        field = cls.model_fields[name]
        if field.default_factory is not None:
            return {}
        return copy.deepcopy(field.default)

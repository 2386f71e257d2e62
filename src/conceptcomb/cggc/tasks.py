"""CGGC task names and options (the (item, demonstrations) pairs: `conceptcomb.cggc.docs`).

lm-eval tasks (Inspect registers the same names, plus ``conceptcomb/cggc`` with -T options):

* ``cggc_id``, ``cggc_ood``: Table 4's two settings, on every test item.
* ``cggc_ood_easy2hard``, ``cggc_ood_hard2easy``: Table 7 "order" (typed demonstrations,
  A, B, C or the reverse), on the typed test items (3 concepts, 2 relations).
* ``cggc_ood_typeA`` / ``B`` / ``C``: Table 7 "level", demonstrations of one structure.
* group ``cggc``: ``cggc_id`` and ``cggc_ood``; ``conceptcomb cggc report`` prints the gap.
* ``cggc_id_test_typeA`` / ``cggc_ood_test_typeA`` (B, C): Table 6, the gap per structure
  type of the test items (group ``cggc_table6``); ``cggc_ood_d13`` / ``cggc_ood_d22``: Fig. 4,
  the packaging of the item's primitives (group ``cggc_fig4``).
* ``cggc_id_verified``, ``cggc_ood_verified``: the same, plus relation verification by a
  judge (section 5.3, `conceptcomb.cggc.verification`) and the metrics on verified items.

Options (lm-eval ``--metadata``, Inspect ``-T``): ``data_dir``, ``seed`` (demonstrations and
edge order, 0), ``packaging`` (``1&3`` / ``2&2``, Fig. 4), ``test_type`` (A/B/C: only test
items of that structure, for Table 6), ``spice_jars``. ``cggc_id_script`` /
``cggc_ood_script`` use the authors' released prompt layout (Inspect: ``-T
prompt_style=script``). The number of demonstrations is lm-eval's ``num_fewshot`` (4) or ``-T k=4``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from conceptcomb.cggc.demos import (
    SETTINGS,
    DemoSpec,
    parse_packaging,
)
from conceptcomb.cggc.graphs import STRUCTURE_TYPES
from conceptcomb.cggc.prompts import PromptStyle, style_named
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.evalcard import version_reader
from conceptcomb.common.lookup import find_named

GROUP_NAME = "cggc"
TABLE6_GROUP, FIG4_GROUP = "cggc_table6", "cggc_fig4"  # lm-eval groups of those tasks
DEFAULT_K = 4


task_version = version_reader("conceptcomb.cggc")


@dataclass(frozen=True)
class CggcTaskSpec:
    setting: str = "ood"
    order: str = "random"
    structure: str | None = None  # demonstrations of one structure type (Table 7 "level")
    style: str = "paper"
    verify: bool = False  # relation verification by a judge (section 5.3)
    test_type: str | None = None  # only test items of one structure type (Table 6)
    packaging: str | None = None  # "1&3" / "2&2": how demonstrations pack primitives (Fig. 4)

    @property
    def name(self) -> str:
        name = f"cggc_{self.setting}"
        if self.order != "random":
            name += "_easy2hard" if self.order == "easy_to_hard" else "_hard2easy"
        if self.structure:
            name += f"_type{self.structure}"
        if self.test_type:
            name += f"_test_type{self.test_type}"
        if self.packaging:
            name += "_d" + self.packaging.replace("&", "")
        if self.style != "paper":
            name += f"_{self.style}"
        if self.verify:
            name += "_verified"
        return name

    @property
    def prompt_style(self) -> PromptStyle:
        return style_named(self.style)

    def describe(self) -> str:
        """One line: ``CGGC compositional generalization, type A demonstrations``."""
        what = "in-distribution" if self.setting == "id" else "compositional generalization"
        if self.verify and self.order != "random":  # in short, to fit a docstring's line
            order = self.order.replace("_", "-")
            return f"CGGC {what}, {order} demonstrations, relation verification"
        extra = f", demonstrations ordered {self.order}" if self.order != "random" else ""
        extra += f", type {self.structure} demonstrations" if self.structure else ""
        extra += f", type {self.test_type} test items (Table 6)" if self.test_type else ""
        if self.packaging:
            extra += f", primitives packed {self.packaging.replace('&', ' & ')} (Fig. 4)"
        extra += ", relation verification by a judge" if self.verify else ""
        return f"CGGC {what}{extra}"


def all_specs() -> list[CggcTaskSpec]:
    specs = [CggcTaskSpec("id"), CggcTaskSpec("ood")]
    specs += [CggcTaskSpec("ood", order) for order in ("easy_to_hard", "hard_to_easy")]
    specs += [CggcTaskSpec("ood", structure=kind) for kind in STRUCTURE_TYPES]
    specs += [CggcTaskSpec(setting, style="script") for setting in ("id", "ood")]
    specs += table6_specs() + fig4_specs()
    return specs


def table6_specs() -> list[CggcTaskSpec]:
    """Table 6: id and ood on the test items of each structure type (the gap per type)."""
    return [
        CggcTaskSpec(setting, test_type=kind) for kind in STRUCTURE_TYPES for setting in SETTINGS
    ]


def fig4_specs() -> list[CggcTaskSpec]:
    """Fig. 4: ood with the item's primitives packed 1 & 3 or 2 & 2 over the demonstrations."""
    return [CggcTaskSpec("ood", packaging=packing) for packing in ("1&3", "2&2")]


def verified_specs() -> list[CggcTaskSpec]:
    """Table 4's settings with relation verification (they need a judge), and the
    easy-to-hard order with it (what `conceptcomb demo` runs)."""
    specs = [CggcTaskSpec(setting, verify=True) for setting in ("id", "ood")]
    return [*specs, CggcTaskSpec("ood", "easy_to_hard", verify=True)]


def spec_by_name(name: str) -> CggcTaskSpec:
    return find_named(
        [*all_specs(), *verified_specs()],
        name,
        lambda known: ConfigError(f"{name!r} is not a CGGC task; the tasks are: {known}"),
    )


@dataclass(frozen=True)
class TaskOptions:
    """Everything that decides a task's items and prompts, beyond its name."""

    data_dir: str | None = None
    k: int = DEFAULT_K
    seed: int = 0
    packaging: tuple[int, int] | None = None
    test_type: str | None = None
    spice_jars: str | None = None

    @classmethod
    def resolve(cls, options: dict[str, Any]) -> TaskOptions:
        """From lm-eval --metadata or Inspect -T values (strings allowed)."""
        test_type = options.get("test_type") or None
        if test_type is not None and str(test_type).upper() not in STRUCTURE_TYPES:
            raise ConfigError(f"test_type={test_type!r}: use A, B or C.")
        return cls(
            data_dir=options.get("data_dir") or None,
            k=int(options.get("k") or DEFAULT_K),
            seed=int(options.get("seed") or 0),
            packaging=parse_packaging(options.get("packaging")),
            test_type=str(test_type).upper() if test_type else None,
            spice_jars=options.get("spice_jars") or None,
        )

    def for_spec(self, spec: CggcTaskSpec) -> TaskOptions:
        """These options with what the task's name fixes (``test_type``, ``packaging``); an
        option that contradicts the name is an error."""
        fixed = {"test_type": spec.test_type, "packaging": parse_packaging(spec.packaging)}
        for option, value in fixed.items():
            given = getattr(self, option)
            if value is not None and given is not None and given != value:
                raise ConfigError(
                    f"{spec.name} fixes {option}={spec.test_type or spec.packaging}; drop "
                    f"{option}={given!r} or run cggc_{spec.setting} with it."
                )
        changes = {option: value for option, value in fixed.items() if value is not None}
        return replace(self, **changes) if changes else self

    def demo_spec(self, spec: CggcTaskSpec) -> DemoSpec:
        options = self.for_spec(spec)
        return DemoSpec(
            setting=spec.setting,
            k=options.k,
            order=spec.order,
            structure=spec.structure,
            packaging=options.packaging if spec.setting == "ood" else None,  # Fig. 4: ood only
            seed=options.seed,
        )

    def as_doc_fields(self, spec: CggcTaskSpec) -> dict[str, Any]:
        """What a doc must carry for the sampler to redo the selection."""
        options = self.for_spec(spec)  # with what the task's name fixes
        packaging = "&".join(map(str, options.packaging)) if options.packaging else ""
        return {
            "task": spec.name,
            "setting": spec.setting,
            "order": spec.order,
            "structure": spec.structure or "",
            "packaging": packaging,
            "test_type": options.test_type or "",
            "seed": options.seed,
            "prompt_style": spec.style,
        }


def options_from_doc(
    doc: dict[str, Any], data_dir: str | None, k: int
) -> tuple[CggcTaskSpec, TaskOptions]:
    spec = CggcTaskSpec(
        str(doc["setting"]),
        str(doc["order"]),
        doc.get("structure") or None,
        str(doc.get("prompt_style") or "paper"),
    )
    options = TaskOptions(
        data_dir=data_dir,
        k=k,
        seed=int(doc["seed"]),
        packaging=parse_packaging(doc.get("packaging")),
    )
    return spec, options

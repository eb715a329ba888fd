"""What a release is asked to do beyond its split plan, and MinCU's strict filter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pairdiff.release.records import ReleasePair

DEFAULT_BASELINE_LIMIT = 0.4


@dataclass(frozen=True, slots=True)
class ReleaseOptions:
    """``strict``: MinCU's rule as a filter — two annotators both "excellent", no defect flag,
    exactly one change (``strict_no_lead`` also leaves out pairs a lead decided).
    ``swap_ab``: add MinCU's A/B order-swap augmentation to half the training targets.
    ``baseline_limit``: the best text-only baseline a release may reach; above it the build is
    refused unless ``allow_baselines`` (a lead's override)."""

    strict: bool = False
    strict_no_lead: bool = False
    swap_ab: bool = False
    baseline_limit: float = DEFAULT_BASELINE_LIMIT
    allow_baselines: bool = False
    # No-change control questions per record; None: not asked, the project's rate
    # (``question_control_rate``). A release stores its resolved rate; none stored is 0.
    control_rate: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.baseline_limit <= 1:
            raise ValueError(f"baseline limit {self.baseline_limit} must lie in [0, 1]")
        if self.control_rate is not None and not 0 <= self.control_rate <= 0.5:
            raise ValueError(f"control rate {self.control_rate} must lie in [0, 0.5]")

    def as_json(self) -> dict:
        return {
            "strict": self.strict,
            "strict_no_lead": self.strict_no_lead,
            "swap_ab": self.swap_ab,
            "baseline_limit": self.baseline_limit,
            "allow_baselines": self.allow_baselines,
            # Asked only: options stored before these existed read the same.
            **({"control_rate": self.control_rate} if self.control_rate else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping | None) -> ReleaseOptions:
        data = data or {}
        return cls(
            strict=bool(data.get("strict", False)),
            strict_no_lead=bool(data.get("strict_no_lead", False)),
            swap_ab=bool(data.get("swap_ab", False)),
            baseline_limit=float(data.get("baseline_limit", DEFAULT_BASELINE_LIMIT)),
            allow_baselines=bool(data.get("allow_baselines", False)),
            control_rate=None if data.get("control_rate") is None else float(data["control_rate"]),
        )


def strict_reason(pair: ReleasePair, *, no_lead: bool) -> str:
    """Why MinCU's strict rule leaves the pair out, or "" when it stays."""
    agreement = pair.agreement
    tiers = list(agreement.get("tiers") or [])
    if agreement.get("annotators", len(tiers)) < 2 or len(tiers) < 2:
        return "fewer than two annotators"
    if any(t != "excellent" for t in tiers):
        return "not excellent from both annotators"
    if any(agreement.get("defects") or []):
        return "a defect flag"
    if len(pair.changes) != 1:
        return "not exactly one change"
    if no_lead and agreement.get("decided_by") == "lead":
        return "decided by a lead"
    return ""


def strict_filter(
    pairs: Sequence[ReleasePair], *, no_lead: bool
) -> tuple[list[ReleasePair], dict[str, int]]:
    """The pairs MinCU's strict rule keeps, and how many it left out for each reason."""
    kept: list[ReleasePair] = []
    left_out: dict[str, int] = {}
    for pair in pairs:
        reason = strict_reason(pair, no_lead=no_lead)
        if reason:
            left_out[reason] = left_out.get(reason, 0) + 1
        else:
            kept.append(pair)
    return kept, dict(sorted(left_out.items()))

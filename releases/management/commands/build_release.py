from django.core.management.base import BaseCommand, CommandError

from pairdiff.release.options import ReleaseOptions
from pairdiff.release.splits import SplitPlan, SplitPlanInvalid
from projects.models import Project
from releases.building import ReleaseRefused, release_build, release_register
from releases.models import ReleaseStatus


def _ratio(text: str) -> tuple[int, int, int]:
    try:
        easy, medium, hard = (int(part) for part in text.split(":"))
    except ValueError as exc:
        raise CommandError(f"--test-ratio {text!r}: expected easy:medium:hard, e.g. 1:2:2") from exc
    return easy, medium, hard


class Command(BaseCommand):
    help = "Build a release of the project's accepted pairs in this process."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--val", type=float, default=0.1, help="val fraction (0.1)")
        parser.add_argument("--test", type=float, default=0.1, help="test fraction (0.1)")
        parser.add_argument("--test-per-category", type=int, help="exact test pairs per category")
        parser.add_argument("--test-ratio", help="test difficulty mix easy:medium:hard, e.g. 1:2:2")
        parser.add_argument(
            "--strict", action="store_true", help="MinCU strict filter (two excellent, no defect)"
        )
        parser.add_argument(
            "--strict-no-lead", action="store_true", help="with --strict: no lead-decided pairs"
        )
        parser.add_argument(
            "--swap-ab", action="store_true", help="50 %% A/B order-swap training augmentation"
        )
        parser.add_argument(
            "--control-rate",
            type=float,
            default=None,
            help="share of each split's pairs also asked as no-difference controls "
            "(default: the project's setting)",
        )
        parser.add_argument(
            "--allow-baselines",
            action="store_true",
            help="build even if a text-only baseline beats the project's limit (override)",
        )

    def handle(self, *args, project, name, seed, val, test, test_per_category, test_ratio, **kw):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"no project with slug {project!r}")
        try:
            plan = SplitPlan(
                seed=seed,
                val_fraction=val,
                test_fraction=test,
                test_per_category=test_per_category,
                test_ratio=_ratio(test_ratio) if test_ratio else None,
            )
            options = ReleaseOptions(
                strict=kw["strict"],
                strict_no_lead=kw["strict_no_lead"],
                swap_ab=kw["swap_ab"],
                allow_baselines=kw["allow_baselines"],
                control_rate=kw["control_rate"],
            )
            release = release_register(project=found, name=name, plan=plan, options=options)
        except (SplitPlanInvalid, ReleaseRefused, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        release = release_build(release.pk)
        if release.status != ReleaseStatus.READY:
            raise CommandError(f"release {release.name} failed: {release.message}")
        manifest = release.manifest
        assert manifest is not None  # a ready release has its manifest
        counts = manifest["counts"]
        self.stdout.write(
            f"release {release.name} (version {release.version}, id {release.pk}) is ready: "
            f"{counts['total']} pairs — "
            + ", ".join(f"{split} {n}" for split, n in counts["splits"].items())
        )
        gate = manifest["text_baselines"]["gate"]
        self.stdout.write(
            f"best text-only baseline: {gate['best']} {_percent(gate['best_accuracy'])} "
            f"(limit {_percent(gate['limit'])})"
        )
        for warning in manifest.get("warnings", manifest["notes"]):
            self.stdout.write(f"warning: {warning}")


def _percent(value) -> str:
    return "—" if value is None else f"{value:.1%}"

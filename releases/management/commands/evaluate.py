import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from pairdiff.scoring.predictions import COORDS
from pairdiff.scoring.text import DEFAULT, THRESHOLDS
from releases.evaluations import EvaluationRefused, evaluation_score
from releases.models import Release


class Command(BaseCommand):
    help = (
        "Score a model's predictions (JSONL) against a release; the metrics as JSON on stdout. "
        "Exit 2 on unusable input."
    )

    def add_arguments(self, parser):
        parser.add_argument("--release", required=True, help="release id (or its unique name)")
        parser.add_argument("--predictions", required=True, help="predictions JSONL file")
        parser.add_argument("--coords", choices=COORDS, default="1000")
        parser.add_argument("--text-metric", choices=list(THRESHOLDS), default=DEFAULT)

    def handle(self, *args, release, predictions, coords, text_metric, **_):
        found = _release(release)
        try:
            # Read line by line as it is scored: a file of any size in bounded memory.
            with Path(predictions).open("rb") as handle:
                result = evaluation_score(
                    release=found, data=handle, coords=coords, text_metric=text_metric
                )
        except OSError as exc:
            raise CommandError(f"cannot read {predictions}: {exc.strerror}", returncode=2) from exc
        except EvaluationRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2))


def _release(text: str) -> Release:
    if text.isdigit():
        found = Release.objects.select_related("project").filter(pk=int(text)).first()
    else:
        matches = list(Release.objects.select_related("project").filter(name=text)[:2])
        if len(matches) > 1:
            raise CommandError(f"several releases are named {text!r}; give its id", returncode=2)
        found = matches[0] if matches else None
    if found is None:
        raise CommandError(f"no release {text!r}", returncode=2)
    return found

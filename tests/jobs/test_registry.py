"""The job/task registry: every kind of work has its task once the apps are ready."""

import pytest

from jobs.models import Job, JobKind
from jobs.registry import UnknownWork, Work, job_task, task_for


@pytest.mark.parametrize("kind", [*JobKind.values, *Work.values])
def test_every_kind_has_a_task(kind):
    assert task_for(kind).name.endswith(
        {
            JobKind.IMPORT: "import_pairs_job",
            JobKind.PREANNOTATE: "preannotate_job",
            JobKind.SYNTHESIZE: "synthesize_pairs_job",
            JobKind.RECOMPUTE: "recompute_agreements",
            JobKind.RELEASE: "build_release",
            JobKind.EVALUATE: "score_evaluation",
            Work.CROSS_CHECK: "compute_agreement",
            Work.GOLD_SCORE: "score_gold_annotation",
        }[kind]
    )


def test_job_arguments_come_from_the_job():
    assert job_task(Job(pk=7, kind=JobKind.IMPORT))[1] == (7,)
    assert job_task(Job(pk=7, kind=JobKind.RELEASE, params={"release": 3}))[1] == (3,)
    assert job_task(Job(pk=7, kind=JobKind.RELEASE, params={})) is None


def test_unknown_kind_is_a_clear_error():
    with pytest.raises(UnknownWork, match="nope"):
        task_for("nope")
    assert job_task(Job(pk=1, kind="nope")) is None

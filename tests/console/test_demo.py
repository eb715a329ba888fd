"""The demo (console/demo.py, demo_work.py and the `demo` command): seeded once, idempotent."""

import dataclasses
from collections import Counter

from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotator.models import GoldAnswer, Pair
from console import demo as demo_module
from projects.models import Project


def test_demo_is_idempotent_and_keeps_gold_answers(db, capsys):
    call_command("demo", "--pairs", "3", "--annotators", "2", "--seed", "1", "--worked", "0")
    first = sorted(Pair.objects.values_list("external_id", "sha256_a", "sha256_b"))

    call_command("demo", "--pairs", "3", "--annotators", "2", "--seed", "1", "--worked", "0")

    assert sorted(Pair.objects.values_list("external_id", "sha256_a", "sha256_b")) == first
    assert GoldAnswer.objects.count() == 3
    project = Project.objects.get(slug="demo")
    roles = dict(project.memberships.values_list("user__username", "role"))
    assert roles == {
        "annotator1": "annotator",
        "annotator2": "annotator",
        "lead": "lead",
        "researcher": "researcher",
    }
    out = capsys.readouterr().out
    assert "lead" in out and "lead-demo" in out
    assert get_user_model().objects.get(username="lead").check_password("lead-demo")


def test_demo_work_leaves_verdicts_a_dispute_and_a_release_once(db, capsys):
    from releases.models import Release

    call_command("demo", "--pairs", "10", "--seed", "2", "--worked", "5")
    call_command("demo", "--pairs", "10", "--seed", "2", "--worked", "5")  # adds nothing

    statuses = Counter(Pair.objects.values_list("status", flat=True))
    assert statuses == {"imported": 5, "accepted": 4, "disputed": 1}  # the 5th got "good"
    # Only a pair of a full twin group goes to a lead: its group keeps two (issue 25).
    disputed = Pair.objects.get(status="disputed")
    group = disputed.metadata["twin_group"]
    assert Pair.objects.filter(metadata__twin_group=group).count() == 3
    [release] = Release.objects.all()
    assert release.name == "demo-v1" and release.status == "ready"
    assert release.records.count() == 4
    assert "release demo-v1 built" in capsys.readouterr().out


def test_demo_skips_generated_pairs_that_repeat_earlier_images(db, monkeypatch):
    real = demo_module.make_pair

    def repeating(index, seed):  # index 2 repeats index 0's images, as the cycles of edits do
        if index == 2:
            return dataclasses.replace(real(0, seed), key=f"demo-{seed}-0002")
        return real(index, seed)

    monkeypatch.setattr(demo_module, "make_pair", repeating)
    report = demo_module.demo_seed(pairs=4, annotators=1, seed=5)
    keys = sorted(report.project.pairs.values_list("external_id", flat=True))
    assert keys == ["demo-5-0000", "demo-5-0001", "demo-5-0003", "demo-5-0004"]

"""Scoring a model's predictions against a release (pure: no Django, no I/O).

``predictions.read_predictions`` reads a predictions JSONL into changes and answers, refusing a
file whose coordinates cannot be in the declared space; ``evaluate.evaluate`` turns them into
MinCU's Grounded F1, mIoU, COCO mAP per side and hallucination rate, and VDiff-Bench's
multiple-choice accuracy per category, with per-category and per-difficulty breakdowns.
"""

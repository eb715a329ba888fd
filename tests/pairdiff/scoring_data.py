"""A tiny release (records and questions) for the scoring tests, built by the release code."""

from pairdiff.geometry import Frame
from pairdiff.release.questions import question_item
from pairdiff.release.records import ReleasePair, benchmark_record

FRAME_A, FRAME_B = Frame(1000, 500), Frame(800, 400)


def change(category, description, entity_a, entity_b, boxes_a, boxes_b):
    return {
        "category": category,
        "description": description,
        "entity_a": entity_a,
        "entity_b": entity_b,
        "boxes_a": boxes_a,
        "boxes_b": boxes_b,
    }


CHANGES = {
    1: change("attribute", "The car turned from white to blue.", "car", "car",
              [[100, 100, 300, 200]], [[80, 80, 240, 160]]),
    2: change("object", "A red hat was added to the table.", "", "hat",
              [], [[400, 200, 480, 260]]),
    3: change("object", "The dog on the sofa was removed.", "dog", "",
              [[500, 250, 900, 480]], []),
    4: change("count", "One more apple lies in the bowl.", "apple", "apples",
              [[10, 10, 60, 60]], [[8, 8, 48, 48], [50, 8, 90, 48]]),
}  # fmt: skip


def records(split="test"):
    out = []
    for pair_id, ch in CHANGES.items():
        pair = ReleasePair(
            pair_id=pair_id,
            external_id=f"r{pair_id}",
            image_a=f"images/{pair_id}_a.png",
            image_b=f"images/{pair_id}_b.png",
            frame_a=FRAME_A,
            frame_b=FRAME_B,
            changes=(ch,),
        )
        out.append(benchmark_record(pair, split))
    return out


def questions(recs, rotated=False):
    out = []
    for i, r in enumerate(recs):
        item = question_item(
            description=r["description"],
            negatives=[f"Something else {i} happened.", f"Another thing {i} moved."],
            answer_position=i % 4,
            seed=i,
        )
        out.append({"id": r["id"], "pair_id": r["pair_id"], "split": r["split"],
                    "category": r["category"], **item})  # fmt: skip
        if rotated:
            options = item["options"]
            letters = list(options)
            turned = dict(zip(letters, [options[letters[-1]], *[options[x] for x in letters[:-1]]],
                              strict=True))  # fmt: skip
            answer = next(k for k, v in turned.items() if v == r["description"])
            out.append(
                {
                    "id": f"{r['id']}-r1",
                    "rotation_of": r["id"],
                    "pair_id": r["pair_id"],
                    "split": r["split"],
                    "category": r["category"],
                    "question": item["question"],
                    "options": turned,
                    "answer": answer,
                }
            )
    return out

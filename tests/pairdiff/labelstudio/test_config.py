import pytest

from pairdiff.labelstudio.config import ConfigUnusable, infer_mapping, parse_config
from pairdiff.labelstudio.mapping import UnknownValue, parse_value_map
from pairdiff.labelstudio.refs import ImageFinder, ImageNotFound, parse_reference

TWO_IMAGES = """<View>
  <Image name="{first}" value="${first_key}"/>
  <RectangleLabels name="r1" toName="{first}"><Label value="x"/></RectangleLabels>
  <Image name="{second}" value="${second_key}"/>
  <RectangleLabels name="r2" toName="{second}"><Label value="x"/></RectangleLabels>
  <TextArea name="notes" toName="{first}"/>
  <Choices name="score" toName="{first}"><Choice value="top"/></Choices>
</View>"""


def _config(first="left", first_key="img1", second="right", second_key="img2") -> str:
    return TWO_IMAGES.format(first=first, first_key=first_key, second=second, second_key=second_key)


def test_document_order_gives_a_then_b():
    mapping = parse_config(_config())

    assert mapping.images == (("left", "img1"), ("right", "img2"))
    assert dict(mapping.boxes) == {"r1": "a", "r2": "b"}
    assert dict(mapping.fields) == {"notes": "ignore", "score": "tier"}
    assert mapping.choice_values == {"score": ("top",)}


def test_names_saying_b_then_a_win_over_order_with_a_note():
    mapping = parse_config(_config("image_b", "image_b", "image_a", "image_a"))

    assert mapping.images == (("image_a", "image_a"), ("image_b", "image_b"))
    assert dict(mapping.boxes) == {"r1": "b", "r2": "a"}
    assert mapping.notes == ("A and B taken from the tag names, not the order",)


def test_the_leads_roles_override_names():
    mapping = parse_config(_config(), roles={"notes": "description"})

    assert mapping.fields["notes"] == "description"


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("<View><Image name='a' value='$a'/></View>", "exactly two <Image"),
        ("<Nope/>", "starts with <View>"),
        ("<View><Image", "not XML"),
        ('<!DOCTYPE v [<!ENTITY x "y">]><View/>', "DOCTYPE"),
        (
            "<View><Image name='a' value='$a'/><Image name='b' value='$b'/></View>",
            "no RectangleLabels",
        ),
        (
            "<View><Image name='a' value='$a'/><Image name='b' value='$b'/>"
            "<RectangleLabels name='r' toName='c'/></View>",
            "'c', which is no Image tag",
        ),
    ],
)
def test_unusable_configs_say_why(xml, message):
    with pytest.raises(ConfigUnusable, match=message):
        parse_config(xml)


def _result(to_name: str, from_name: str = "box") -> dict:
    return {"type": "rectanglelabels", "from_name": from_name, "to_name": to_name, "value": {}}


def test_inference_matches_object_names_to_keys_and_refuses_a_guess():
    task = {
        "data": {"image_a": "a.png", "image_b": "b.png"},
        "annotations": [{"result": [_result("a", "box_a"), _result("b", "box_b")]}],
    }
    mapping = infer_mapping([task])
    assert mapping.images == (("a", "image_a"), ("b", "image_b"))

    task["annotations"][0]["result"] = [_result("img1"), _result("img2")]
    with pytest.raises(ConfigUnusable, match="give the labelling config"):
        infer_mapping([task])


def test_value_map_reads_json_and_yaml_and_checks_targets():
    yaml_map = parse_value_map(b"tier:\n  3 good: good\nabsent_side:\n  A empty (added): a\n")
    json_map = parse_value_map(b'{"tier": {"3 good": "good"}}')

    assert yaml_map.tier(" 3  GOOD ", "quality") == json_map.tier("3 good", "quality") == "good"
    assert yaml_map.absent_side("A empty (added)", "empty_side") == "a"
    assert yaml_map.back("tier", "good", ("4 excellent", "3 good")) == "3 good"
    with pytest.raises(UnknownValue, match="'2 fair' is no tier"):
        yaml_map.tier("2 fair", "quality")
    with pytest.raises(ConfigUnusable, match="which is none of"):
        parse_value_map(b"tier: {'3 good': great}")
    with pytest.raises(ConfigUnusable, match="unknown mapping section 'tiers'"):
        parse_value_map(b"tiers: {}")


@pytest.mark.parametrize(
    ("reference", "path", "bucket"),
    [
        ("/data/local-files/?d=pairs%2Fa%2F001.png", "pairs/a/001.png", ""),
        ("/data/upload/7/1a2b3c4d-cat.png", "1a2b3c4d-cat.png", ""),
        ("s3://team/datasets/a/001.png", "datasets/a/001.png", "team"),
        ("gs://team/a/001.png", "a/001.png", "team"),
        ("https://cdn.example.com/x/a/001.png?X-Amz-Signature=1", "/x/a/001.png", ""),
    ],
)
def test_references_reduce_to_a_path(reference, path, bucket):
    parsed = parse_reference(reference)
    assert (parsed.path, parsed.bucket) == (path, bucket)


def test_same_file_name_in_two_folders_is_told_apart_by_its_folder():
    finder = ImageFinder(["before/001.png", "after/001.png"])

    assert finder.find("s3://b/datasets/pairs/after/001.png") == "after/001.png"
    assert finder.find("/data/local-files/?d=x/before/001.png") == "before/001.png"
    with pytest.raises(ImageNotFound, match="several files match 001.png"):
        finder.find("/data/upload/3/001.png")

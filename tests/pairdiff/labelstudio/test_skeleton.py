"""What the labelling config says about the entities text, and the mapping skeleton a preview
offers for values that map to nothing."""

import pytest
import yaml

from pairdiff.labelstudio.config import parse_config
from pairdiff.labelstudio.skeleton import mapping_skeleton, problem_kind, unknown_value

IMAGES = """<Image name="a" value="$image_a"/><RectangleLabels name="box_a" toName="a"/>
<Image name="b" value="$image_b"/><RectangleLabels name="box_b" toName="b"/>"""


@pytest.mark.parametrize(
    ("entities", "header", "separator"),
    [
        ('placeholder="entity on A, entity on B"', "", ","),
        ('placeholder="before | after"', "", "|"),
        ('hint="two labels, comma-separated"', "", ","),
        ("", '<Header value="Entities: separated by commas"/>', ","),
        ('placeholder="what it is"', '<Header value="Describe it, briefly"/>', ""),
        ('placeholder="a, b, c"', "", ""),  # not one separator between two labels
    ],
)
def test_the_config_says_how_entities_are_split(entities, header, separator):
    xml = f'<View>{IMAGES}{header}<TextArea name="entities" toName="a" {entities}/></View>'
    mapping = parse_config(xml)
    assert mapping.entities_separator == separator
    assert type(mapping).from_json(mapping.as_json()).entities_separator == separator


def test_unknown_values_are_read_from_the_messages_that_name_them():
    assert unknown_value(
        "annotation 7 by Label Studio user 3: category: 'Colour swap' is no category of the "
        "project; map it in the mapping's category section (to one of attribute, object)"
    ) == ("category", "Colour swap")
    assert unknown_value("quality: \"it's ok\" is no tier; map it in the mapping's tier "
                         "section (to one of excellent)") == ("tier", "it's ok")  # fmt: skip
    assert unknown_value("a box on 'c' is neither image A nor image B") is None


def test_the_same_problem_reads_the_same_whoever_had_it():
    one = "annotation 7 by Label Studio user 3: the boxes of one change have different labels"
    other = "annotation 9 by Label Studio user 4: the boxes of one change have different labels"
    assert problem_kind(one) == problem_kind(other)


def test_the_skeleton_lists_each_unknown_value_once_under_its_section():
    messages = [
        "c: 'Colour swap' is no category of the project; map it in the mapping's category section",
        "q: '5 stars' is no tier; map it in the mapping's tier section (to one of excellent)",
        "c: 'Colour swap' is no category of the project; map it in the mapping's category section",
    ]
    text = mapping_skeleton(messages, {"category": ["attribute"], "tier": ["excellent"]})
    assert text.startswith("# Values found that map to nothing")
    assert "# category: one of attribute\n# tier: one of excellent\n" in text
    assert yaml.safe_load(text) == {"category": {"Colour swap": ""}, "tier": {"5 stars": ""}}
    assert mapping_skeleton(["nothing unknown here"], {}) == ""

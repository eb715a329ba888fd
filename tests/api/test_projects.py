from annotator.services import PairInput, pair_create
from projects.creating import project_create
from tests.images import edited_pair


def test_project_list_shows_only_the_callers_projects_with_counts(
    client, project, annotator_1, django_assert_num_queries
):
    project_create(slug="secret", name="Secret")
    a, b = edited_pair()
    pair_create(project=project, pair_input=PairInput(a, b))
    client.force_login(annotator_1)

    # session, user, page count, projects, stored counts (large projects), the others' counts
    # (one query for all), roles
    with django_assert_num_queries(7):
        response = client.get("/api/v1/projects/")

    assert response.status_code == 200
    [row] = response.json()["results"]
    assert row["slug"] == "cars" and row["role"] == "annotator"
    # Annotators are blind to verdicts, counted too; counted_at null: counted for this request.
    assert row["counts"] == {"pairs": 1, "counted_at": None}


def test_project_detail_is_404_for_non_members(client, project, outsider):
    client.force_login(outsider)
    assert client.get("/api/v1/projects/cars/").status_code == 404


def test_api_requires_authentication(client, project):
    response = client.get("/api/v1/projects/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_project_detail_counts_accepted_pairs_by_category_and_difficulty(
    client, project, lead, annotator_1, annotator_2
):
    from tests.factories import answer, make_accepted

    bodies = [
        answer(category="attribute"),
        answer(category="object", boxes_a=[], boxes_b=[[0, 0, 96, 40]]),
    ]
    make_accepted(project, [annotator_1, annotator_2], bodies)
    client.force_login(lead)
    counts = client.get("/api/v1/projects/cars/").json()["counts"]
    assert counts["accepted"] == 2
    assert counts["accepted_by"] == {
        "by_category": {"attribute": 1, "object": 1},
        "by_difficulty": {"easy": 1, "hard": 1},
    }

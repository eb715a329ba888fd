def test_openapi_schema_lists_the_public_paths(client, db):
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/projects/",
        "/api/v1/projects/{slug}/next/",
        "/api/v1/assignments/{id}/draft/",
        "/api/v1/assignments/{id}/submit/",
    ):
        assert path in paths
    submit = paths["/api/v1/assignments/{id}/submit/"]["post"]
    assert any(p["name"] == "Idempotency-Key" for p in submit["parameters"])


def test_docs_page_uses_bundled_assets_only(client, db):
    response = client.get("/api/v1/docs/")

    assert response.status_code == 200
    body = response.content.decode()
    assert "swagger-ui" in body and "cdn" not in body.lower()

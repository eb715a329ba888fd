"""Every lead page of a project carries the project's tab bar, with the disputes waiting."""

import re

import pytest


@pytest.mark.parametrize(
    ("url", "current"),
    [
        ("/review/cars/disputes/", "Disputes"),
        ("/review/cars/spot-check/", "Spot-check"),
        ("/review/cars/dashboard/", "Quality"),
        ("/p/cars/", "Pairs"),
        ("/p/cars/settings/", "Settings"),
    ],
)
def test_lead_pages_show_the_tab_bar_with_the_dispute_count(client, disputed, lead, url, current):
    client.force_login(lead)
    body = client.get(url).content.decode()
    nav = re.search(r'<nav class="manage-nav".*?</nav>', body, re.S).group(0)
    assert re.search(r'aria-current="page">' + re.escape(current), nav), nav
    count = re.search(r'>Disputes <span class="nav-count"[^>]*>(\d+)</span>', nav)
    assert count and count.group(1) == "1"

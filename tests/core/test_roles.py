"""Every role lands on a page that is theirs, and every link a role is shown leads somewhere it may go
(issue 9, item 13). The crawl logs in as each demo role and follows every link of every page it
reaches; a 403, 404 or 500 anywhere fails it, and so does one of Django's own debug or error pages."""

from __future__ import annotations

import re
from collections import deque
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from annotation.services.demo import demo_load
from core.access import PROJECT_MANAGERS, RESEARCHERS
from tests import factories as f

WORK_FORM = re.compile(r'<form method="post" action="(/work/campaign/\d+/work/)"')
HREF = re.compile(r'<(?:a|link)\b[^>]*\bhref="([^"#]*)', re.I)
SRC = re.compile(r'<(?:img|script)\b[^>]*\bsrc="([^"]*)', re.I)
# Links that act or leave: logging out ends the crawl's session; the admin's own docs and "delete"
# confirmation pages are GETs that change nothing, so they stay in.
SKIP = ("/accounts/logout/",)
MAX_PAGES = 260
MAX_QUERY_VARIANTS = 2  # per path: the admin's sort and filter links are many variants of one page


def login(client: Client, username: str) -> None:
    response = client.post(reverse("login"), {"username": username, "password": "demo-pass-2026"})
    assert response.status_code == 302, f"{username} could not log in"


def crawl(client: Client, start: str = "/") -> dict[str, int]:
    """Breadth-first over same-site links from ``start``; returns {url: status} of what it fetched."""
    seen: dict[str, int] = {}
    variants: dict[str, int] = {}
    queue = deque([start])
    while queue and len(seen) < MAX_PAGES:
        url = queue.popleft()
        if url in seen:
            continue
        response = client.get(url)
        if response.status_code in (301, 302):
            seen[url] = response.status_code
            queue.appendleft(urljoin(url, response["Location"]))
            continue
        seen[url] = response.status_code
        if not response.get("Content-Type", "").startswith("text/html"):
            continue
        page = response.content.decode()
        assert "Traceback" not in page and "technical_500" not in page, url
        for link in HREF.findall(page) + SRC.findall(page):
            target = urljoin(url, link.replace("&amp;", "&"))
            parts = urlsplit(target)
            if parts.netloc or parts.scheme in ("mailto", "javascript") or target.startswith(SKIP):
                continue
            path = parts.path
            if parts.query:
                variants[path] = variants.get(path, 0) + 1
                if variants[path] > MAX_QUERY_VARIANTS:
                    continue
            queue.append(path + (f"?{parts.query}" if parts.query else ""))
    return seen


@pytest.fixture
def demo(db):
    return demo_load()


@pytest.mark.parametrize(
    ("username", "landing"),
    [("anna-de", "/work/"), ("omar-ar", "/work/"), ("manager", "/admin/"), ("researcher", "/research/")],
)
def test_each_demo_role_lands_on_its_own_page_and_every_link_works(demo, username, landing):
    client = Client()
    login(client, username)
    response = client.get("/")
    assert response.status_code == 302 and response["Location"] == landing
    fetched = crawl(client)
    if landing == "/work/":
        # An annotator's pages beyond the dashboard open by a POST (start a batch): start each one.
        for action in WORK_FORM.findall(client.get("/work/").content.decode()):
            started = client.post(action)
            assert started.status_code == 302, action
            fetched |= crawl(client, started["Location"])
    broken = {
        url: status for url, status in fetched.items() if status in (400, 403, 404, 405) or status >= 500
    }
    assert broken == {}, f"{username} is shown links that fail: {broken}"
    assert len(fetched) > 8, fetched  # it really crawled


def test_login_sends_each_role_home(demo):
    for username, landing in (("manager", "/admin/"), ("researcher", "/research/"), ("ben-de", "/work/")):
        client = Client()
        response = client.post(reverse("login"), {"username": username, "password": "demo-pass-2026"})
        assert response.status_code == 302 and response["Location"] == "/"
        assert client.get("/")["Location"] == landing


def test_admin_view_site_leads_home(demo):
    client = Client()
    login(client, "manager")
    page = client.get("/admin/").content.decode()
    assert 'href="/"' in page  # "View site"
    assert client.get("/")["Location"] == "/admin/"


def test_an_account_without_a_role_is_told_so(db, client):
    user = f.UserFactory(username="nobody")
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 403
    assert "No role yet" in response.content.decode()
    assert client.get("/", follow=False).status_code == 403
    anonymous = Client().get("/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def test_the_top_bar_shows_only_areas_of_the_role(db, client):
    manager = f.RoleUserFactory(username="pm2", role=PROJECT_MANAGERS)
    client.force_login(manager)
    page = client.get(reverse("research-home")).content.decode()
    assert 'href="/admin/"' in page and 'href="/research/"' in page and 'href="/work/"' not in page
    researcher = f.RoleUserFactory(username="res2", role=RESEARCHERS)
    other = Client()
    other.force_login(researcher)
    page = other.get(reverse("research-home")).content.decode()
    assert 'href="/work/"' not in page


def test_research_home_says_how_to_get_a_metric_run(researcher_client):
    page = researcher_client.get(reverse("research-home")).content.decode()
    assert 'id="no-runs"' in page and "Metric runs › Add" in page
    # The first card leads to the verdict a researcher came for: the trust table of the report page.
    assert page.index('id="home-trust"') < page.index('id="home-reports"')
    assert 'href="/reports/#trust"' in page
    report = researcher_client.get(reverse("reports:report")).content.decode()
    assert 'id="no-runs"' in report and "This field is required" not in report


def test_the_api_root_lists_the_endpoints(researcher_client, client, db):
    body = researcher_client.get("/api/").json()
    urls = [entry["url"] for entry in body["endpoints"]]
    assert any(url.endswith("/api/campaigns/") for url in urls) and any(
        url.endswith("/api/docs/") for url in urls
    )
    assert any(url.endswith("/api/trust/") for url in urls)
    for url in urls:
        path = urlsplit(url).path
        response = researcher_client.get(path)
        if path in ("/api/correlations/", "/api/trust/"):
            # They need ?runs= and say so.
            assert response.status_code == 400 and response.json()["message"].startswith("runs:"), path
            continue
        assert response.status_code == 200, path
    assert client.get("/api/").status_code == 401


def test_error_pages_are_the_platforms_own(researcher_client, client, db):
    response = researcher_client.get("/no/such/page/")
    page = response.content.decode()
    assert response.status_code == 404 and 'id="error-page"' in page and "Go to your start page" in page
    assert "Page not found (404)" not in page and "URLconf" not in page
    annotator = f.AnnotatorFactory(user__username="ann-403")
    client.force_login(annotator.user)
    response = client.get(reverse("research-home"))
    assert response.status_code == 403 and "Not for your role" in response.content.decode()


def test_favicon_is_served(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("img/favicon.svg")

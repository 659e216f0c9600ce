"""Password guessing (issue #19, item 1): every login form locks an account and an address out.

Found: 200 wrong passwords for ``ann`` on /accounts/login/ were all answered 200 and the right
password then worked; the same on /admin/login/. The token endpoint's "30/minute" throttle
lived in each gunicorn worker's memory and was keyed on the whole ``X-Forwarded-For`` header,
which deploy/nginx.conf passed on from the client, so a new header per attempt was never
throttled. Here: each form in-process (PostgreSQL, Redis), then a real gunicorn with four sync
workers, straight and behind the shipped nginx (as tests/test_proxy.py runs them).
"""
import http.client
import http.server
import json
import secrets
import threading

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client

from bench._server import gunicorn, nginx
from labeling.access.client_address import TrustedProxies, client_address
from tests.conftest import database_url
from tests.factories import PASSWORD, make_user

LOCKED = "Too many failed log-ins"
TOKEN = "/api/auth/token/"
# form -> the status of an ordinary wrong password there (the form again, or DRF's 400)
FORMS = {"/accounts/login/": 200, "/admin/login/": 200, TOKEN: 400}


def address():
    """A random private client address: no lockout or throttle count left by another test or run."""
    return f"10.{secrets.randbelow(250)}.{secrets.randbelow(250)}.{secrets.randbelow(250) + 2}"


def attempt(form, username, password, *, client=None, **meta):
    client = client or Client()
    return client.post(form, {"username": username, "password": password, "next": "/"},
                       REMOTE_ADDR=meta.pop("REMOTE_ADDR", None) or address(), **meta)


def logged_in(form, response, client):
    if form == TOKEN:
        return response.status_code == 200 and bool(response.json().get("token"))
    return response.status_code == 302 and "_auth_user_id" in client.session


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def unlock_in_the_admin(admin_client, username):
    """What an admin does: Axes › Access attempts, select the account's rows, delete."""
    page = admin_client.get("/admin/axes/accessattempt/", {"q": username})
    assert page.status_code == 200 and username in page.content.decode()
    ids = list(AccessAttempt.objects.filter(username=username).values_list("pk", flat=True))
    assert ids
    answer = admin_client.post("/admin/axes/accessattempt/",
                               {"action": "delete_selected", "_selected_action": ids, "post": "yes"})
    assert answer.status_code == 302
    assert not AccessAttempt.objects.filter(username=username).exists()


@pytest.mark.parametrize("form", FORMS)
def test_200_guesses_lock_the_account_until_an_admin_unlocks_it(form, admin_client):
    make_user("ann", "annotator", is_staff=form.startswith("/admin/"))
    limit = settings.AXES_FAILURE_LIMIT
    # A guesser with many addresses: each attempt from another one, so only the account's count stops them.
    statuses = [attempt(form, "ann", f"guess{i}").status_code for i in range(200)]
    assert statuses == [FORMS[form]] * (limit - 1) + [429] * (201 - limit)

    client = Client()
    refused = attempt(form, "ann", PASSWORD, client=client)
    assert refused.status_code == 429 and LOCKED in refused.content.decode()
    assert refused["Retry-After"] == str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    assert not logged_in(form, refused, client)

    unlock_in_the_admin(admin_client, "ann")
    client = Client()
    assert logged_in(form, attempt(form, "ann", PASSWORD, client=client), client)


@pytest.mark.parametrize("form", FORMS)
def test_one_address_trying_many_accounts_is_locked_whatever_forwarded_for_it_sends(form, db):
    make_user("bob", "annotator", is_staff=form.startswith("/admin/"))
    limit = settings.AXES_FAILURE_LIMIT
    guesser = address()
    statuses = [attempt(form, f"user{i}", "123456", REMOTE_ADDR=guesser, HTTP_X_FORWARDED_FOR=address()).status_code
                for i in range(limit + 3)]
    assert statuses == [FORMS[form]] * (limit - 1) + [429] * 4
    # The address stays locked for every account, the right password included ...
    assert attempt(form, "bob", PASSWORD, REMOTE_ADDR=guesser).status_code == 429
    # ... and bob, from his own address, is not.
    client = Client()
    assert logged_in(form, attempt(form, "bob", PASSWORD, client=client), client)


def test_the_lockout_page_is_a_page_and_the_api_answers_json(db):
    make_user("ann", "annotator")
    guesser = address()
    for i in range(settings.AXES_FAILURE_LIMIT):
        attempt("/accounts/login/", "ann", f"guess{i}", REMOTE_ADDR=guesser)
    page = attempt("/accounts/login/", "ann", PASSWORD, REMOTE_ADDR=guesser)
    assert page["Content-Type"].startswith("text/html") and "<h1>Not now</h1>" in page.content.decode()
    api = attempt(TOKEN, "ann", PASSWORD, REMOTE_ADDR=guesser)
    assert api.status_code == 429 and api.json()["detail"].startswith(LOCKED)


# The client address ---------------------------------------------------------------------------


def test_forwarded_for_is_believed_only_from_a_trusted_proxy_and_only_its_last_hop():
    proxies = TrustedProxies(["127.0.0.1", "172.18.0.0/16"])
    meta = {"REMOTE_ADDR": "203.0.113.5", "HTTP_X_FORWARDED_FOR": "198.51.100.1"}
    assert client_address(meta, proxies) == "203.0.113.5"  # straight from the client: its header is ignored
    for proxy in ("127.0.0.1", "172.18.3.4"):
        assert client_address({"REMOTE_ADDR": proxy, "HTTP_X_FORWARDED_FOR": "198.51.100.1"}, proxies) == "198.51.100.1"
        # A client's own header in front of the proxy's value is not believed.
        assert client_address({"REMOTE_ADDR": proxy, "HTTP_X_FORWARDED_FOR": "1.2.3.4, 198.51.100.1"},
                              proxies) == "198.51.100.1"
        assert client_address({"REMOTE_ADDR": proxy, "HTTP_X_FORWARDED_FOR": "not-an-address"}, proxies) == proxy
        assert client_address({"REMOTE_ADDR": proxy}, proxies) == proxy
    assert client_address({"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "198.51.100.1"},
                          TrustedProxies([])) == "127.0.0.1"


def test_a_trusted_proxy_may_be_named_by_host_name():
    proxies = TrustedProxies(["localhost", "no-such-host.invalid"], resolve_every=0)
    assert "127.0.0.1" in proxies
    assert "203.0.113.5" not in proxies


# Real gunicorn (four sync workers), straight and behind the shipped nginx --------------------


@pytest.fixture(scope="module")
def servers(django_db_setup, django_db_blocker):
    """gunicorn (production settings, nginx at 127.0.0.1 trusted) and nginx in front: their ports."""
    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as env:
        env.setenv("STEPMARK_TRUSTED_PROXIES", "127.0.0.1")
        env.setenv("DJANGO_SECURE_COOKIES", "0")  # plain http here
        with gunicorn(database_url(), workers=4, threads=0, ready_path="/accounts/login/") as (web, _), \
                nginx(web) as (proxy, _):
            yield {"web": web, "proxy": proxy}


def post_token(port, username, password, *, source, forwarded_for=None):
    """POST /api/auth/token/ from the loopback address ``source``: (status, JSON body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
    headers = {"Content-Type": "application/json", "Host": f"127.0.0.1:{port}"}
    if forwarded_for:
        headers["X-Forwarded-For"] = forwarded_for
    conn.request("POST", TOKEN, json.dumps({"username": username, "password": password}), headers)
    response = conn.getresponse()
    body = json.loads(response.read() or b"{}")
    conn.close()
    return response.status, body


def loopback():
    """A fresh loopback address (127.0.0.1 is nginx's, the trusted proxy)."""
    return f"127.{secrets.randbelow(250) + 1}.{secrets.randbelow(250)}.{secrets.randbelow(250) + 2}"


def test_nginx_passes_on_the_address_it_talked_to_never_the_clients_header():
    """deploy/nginx.conf sets X-Forwarded-For to $remote_addr: one value, the peer's, whatever the client sent."""
    seen = []

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get_all("X-Forwarded-For"))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    upstream = http.server.HTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with nginx(upstream.server_address[1]) as (proxy, _):
            client = loopback()
            for sent in (None, "203.0.113.9", "203.0.113.9, 198.51.100.1"):
                conn = http.client.HTTPConnection("127.0.0.1", proxy, timeout=30, source_address=(client, 0))
                conn.request("GET", "/", headers={"X-Forwarded-For": sent} if sent else {})
                assert conn.getresponse().status == 204
                conn.close()
    finally:
        upstream.shutdown()
    assert seen == [[client]] * 3


@pytest.mark.slow
def test_across_workers_200_guesses_lock_the_account(servers, transactional_db):
    make_user("ann", "annotator")
    limit = settings.AXES_FAILURE_LIMIT
    answers = [post_token(servers["web"], "ann", f"guess{i}", source=loopback()) for i in range(200)]
    assert [status for status, _ in answers] == [400] * (limit - 1) + [429] * (201 - limit)
    assert all(body["detail"].startswith(LOCKED) for _, body in answers[limit - 1:])
    status, body = post_token(servers["web"], "ann", PASSWORD, source=loopback())
    assert status == 429 and "token" not in body


@pytest.mark.slow
def test_a_spoofed_forwarded_for_straight_to_gunicorn_does_not_dodge_the_address_lock(servers, transactional_db):
    make_user("ann", "annotator")
    limit = settings.AXES_FAILURE_LIMIT
    guesser = loopback()
    statuses = [post_token(servers["web"], f"user{i}", "123456", source=guesser, forwarded_for=loopback())[0]
                for i in range(limit + 3)]
    assert statuses == [400] * (limit - 1) + [429] * 4
    assert post_token(servers["web"], "ann", PASSWORD, source=guesser, forwarded_for=loopback())[0] == 429
    assert post_token(servers["web"], "ann", PASSWORD, source=loopback())[0] == 200
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {guesser}


@pytest.mark.slow
def test_behind_nginx_each_client_is_keyed_by_its_own_address(servers, transactional_db):
    make_user("ann", "annotator")
    limit = settings.AXES_FAILURE_LIMIT
    guesser, colleague = loopback(), loopback()
    # The guesser sends a new X-Forwarded-For each time, even the colleague's address: nginx replaces it.
    statuses = [post_token(servers["proxy"], f"user{i}", "123456", source=guesser,
                           forwarded_for=colleague if i % 2 else loopback())[0] for i in range(limit + 3)]
    assert statuses == [400] * (limit - 1) + [429] * 4
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {guesser}
    # The colleague, behind the same proxy, is neither the proxy's address nor the guesser's.
    assert post_token(servers["proxy"], "ann", PASSWORD, source=colleague)[0] == 200


@pytest.mark.slow
def test_the_token_throttle_is_shared_by_every_worker(servers, transactional_db):
    """30 requests a minute per address: the 31st is refused, whichever of the four workers takes it,
    the right password included. Every request counts, so the 29 after the first log-in send no
    password: each log-in costs the production password hash (about 0.4 s), a form error nothing."""
    make_user("ann", "annotator")
    client = loopback()
    assert post_token(servers["web"], "ann", PASSWORD, source=client)[0] == 200
    statuses = [post_token(servers["web"], "ann", "", source=client)[0] for _ in range(29)]
    assert statuses == [400] * 29
    status, body = post_token(servers["web"], "ann", PASSWORD, source=client)
    assert status == 429 and "token" not in body
    assert post_token(servers["web"], "ann", PASSWORD, source=loopback())[0] == 200  # another address is not

"""Issue #30: a person's own workspace keys, checked on the server and kept on their account."""
import json
import shutil
import subprocess

import pytest
from django.test import Client
from django.urls import reverse

from labeling.errors import DomainError
from labeling.models import Annotator
from labeling.workspace_keys import DEFAULTS, checked, effective
from tests.conftest import ROOT
from tests.factories import client_for, make_project, make_user


def refusal(keys):
    with pytest.raises(DomainError) as caught:
        checked(keys)
    return caught.value.field, caught.value.message


def test_a_changed_action_takes_one_key_in_place_of_all_its_defaults_and_the_others_keep_theirs():
    keys = effective({"good": "j", "undo": "Delete"})
    assert keys["good"] == ["j"] and keys["undo"] == ["Delete"]
    assert keys["neutral"] == ["2", "0"] and keys["submit"] == ["Enter"]
    assert checked({"good": "j", "undo": "Delete"}) == {"good": "j", "undo": "Delete"}
    assert checked({}) == {}


def test_a_key_freed_by_its_action_may_go_to_another():
    # 1 was +1's; with +1 on j, 1 may mark unsure, and f (free now) may be +1's.
    assert checked({"good": "f", "flag": "1"}) == {"good": "f", "flag": "1"}


def test_unknown_actions_are_refused_by_name():
    field, message = refusal({"rate_twice": "x"})
    assert field == "keys.rate_twice" and "no workspace action" in message


def test_one_key_per_action():
    assert refusal({"good": ["j", "k"]})[0] == "keys.good"
    assert refusal({"good": None})[0] == "keys.good"
    assert refusal({"good": ""})[0] == "keys.good"
    assert refusal({"good": "jk"})[0] == "keys.good"


@pytest.mark.parametrize("key", ["Tab", "Escape", " "])
def test_reserved_keys_are_refused_with_the_field_named(key):
    field, message = refusal({"submit": key})
    assert field == "keys.submit" and "cannot be bound" in message


def test_a_key_bound_twice_is_refused_naming_the_action_that_was_changed():
    # Two changed actions on one key: the second one named.
    assert refusal({"good": "j", "bad": "j"}) == ("keys.bad", "'j' is already the key of good: one key does one thing.")
    # A changed action on another's default key (f is unsure's): the changed one is named, whatever the order.
    assert refusal({"good": "f"}) == ("keys.good", "'f' is already the key of flag: one key does one thing.")
    assert refusal({"timer": "1"}) == ("keys.timer", "'1' is already the key of good: one key does one thing.")


def test_named_keys_and_case_count():
    assert checked({"good": "ArrowUp", "bad": "ArrowDown", "neutral": "J"}) == {
        "good": "ArrowUp", "bad": "ArrowDown", "neutral": "J"}
    assert refusal({"good": "F5"})[0] == "keys.good"
    assert refusal({"good": "\n"})[0] == "keys.good"
    assert refusal("j")[0] == "keys"


def test_the_browser_holds_the_same_actions_and_defaults():
    node = shutil.which("node")
    assert node, "node is not installed"
    script = "import('./src/workspace/keys.js').then((m) => console.log(JSON.stringify(m.DEFAULT_KEYS)))"
    done = subprocess.run([node, "-e", script], cwd=ROOT / "frontend", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    browser = json.loads(done.stdout)
    assert list(browser) == list(DEFAULTS) and browser == DEFAULTS


# The API and the page ------------------------------------------------------------------


@pytest.fixture
def ann(db):
    make_project()
    return make_user("ann", "annotator")


def test_put_keeps_the_keys_on_the_account_and_get_reads_them_back(ann):
    client = client_for(ann)
    url = reverse("api:me-keys")
    fresh = client.get(url).json()
    assert fresh == {"keys": {}, "defaults": DEFAULTS}

    answer = client.put(url, {"keys": {"good": "j"}}, format="json")
    assert answer.status_code == 200 and answer.json()["keys"] == {"good": "j"}
    assert Annotator.objects.get(user=ann).workspace_keys == {"good": "j"}
    # Another session (another machine) reads the same.
    assert client_for(ann).get(url).json()["keys"] == {"good": "j"}

    assert client.put(url, {"keys": {}}, format="json").json()["keys"] == {}  # reset to the defaults
    assert Annotator.objects.get(user=ann).workspace_keys == {}


def test_a_refused_put_is_a_400_naming_the_field_and_changes_nothing(ann):
    client = client_for(ann)
    url = reverse("api:me-keys")
    client.put(url, {"keys": {"good": "j"}}, format="json")
    answer = client.put(url, {"keys": {"good": "j", "submit": "Tab"}}, format="json")
    assert answer.status_code == 400 and answer.json()["field"] == "keys.submit"
    answer = client.put(url, {"keys": {"good": "j", "bad": "j"}}, format="json")
    assert answer.status_code == 400 and answer.json()["field"] == "keys.bad"
    assert client.put(url, {}, format="json").status_code == 400  # no keys at all is no reset
    assert Annotator.objects.get(user=ann).workspace_keys == {"good": "j"}


def test_only_annotators_have_workspace_keys(ann):
    lead = make_user("lead", "lead")
    url = reverse("api:me-keys")
    assert client_for(None).get(url).status_code in (401, 403)
    assert client_for(lead).put(url, {"keys": {"good": "j"}}, format="json").status_code == 403


def test_the_workspace_page_carries_the_persons_keys(ann):
    project = make_project()
    client_for(ann).put(reverse("api:me-keys"), {"keys": {"good": "j"}}, format="json")
    browser = Client()
    browser.force_login(ann)
    page = browser.get(reverse("workspace", args=[project.pk])).content.decode()
    assert '<script id="ws-keys" type="application/json">{"good": "j"}</script>' in page

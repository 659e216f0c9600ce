"""Issue #30 item 1: a key redraws only the cards it changed.

Every key used to write every card and put the whole list back, so key-to-paint grew with the
solution (bench/key_latency.py measures it). Here a MutationObserver on the step list records
what each key changed in the DOM: the card that was rated and the card that became current, and
nothing else; every other card keeps its node (a card put back into the list counts as changed).
"""
import pytest

from tests.factories import make_task, make_user

from .conftest import current, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STEPS = [f"Step {k}: so $x_{k} = {k}$." for k in range(6)]

# Each card (and alternatives heading) gets a serial; the observer names the serials of the
# nodes each mutation touched (an attribute, a text inside, or the node itself added or removed).
WATCH = """() => {
  const list = document.querySelector('.ws-step-list');
  window.__serials ??= 0;
  for (const node of list.children) node.__serial ??= String(window.__serials++);
  window.__touched = new Set();
  const owner = (node) => {
    while (node && node.parentNode !== list) node = node.parentNode;
    return node ? (node.__serial ?? 'new') : null;
  };
  window.__observer?.disconnect();
  window.__observer = new MutationObserver((records) => {
    for (const r of records) {
      if (r.target === list) {
        for (const n of [...r.addedNodes, ...r.removedNodes]) window.__touched.add(n.__serial ?? 'new');
      } else {
        window.__touched.add(owner(r.target));
      }
    }
  });
  window.__observer.observe(list, {subtree: true, childList: true, attributes: true, characterData: true});
  return [...list.children].map((n) => n.__serial);
}"""

# The serials of the cards the key changed, once the page has drawn it.
TOUCHED = """() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
  window.__observer.takeRecords();
  resolve([...window.__touched].sort());
})))"""


def serial_of(page, position, alternative):
    return page.evaluate(f"""() => document.querySelector('.ws-step[data-position="{position}"]'
                             + '[data-alternative="{alternative}"]').__serial""")


def press_and_see(page, key):
    """Serials of the nodes ``key`` changed, and the list's serials after it."""
    before = page.evaluate(WATCH)
    page.keyboard.press(key)
    touched = page.evaluate(TOUCHED)
    after = page.evaluate("() => [...document.querySelectorAll('.ws-step-list > *')].map((n) => n.__serial ?? 'new')")
    return before, touched, after


def test_a_rating_key_changes_only_the_rated_card_and_the_next_current_one(page, live_server):
    # Phase 1: every step's alternatives are rated after it, so the list grows by one card a key.
    project, _ = make_task(STEPS, alternatives={k: 2 for k in range(6)}, allow_alternatives=True,
                           stop_at_first_error=False)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=f"/projects/{project.pk}/work/")
    page.wait_for_selector('#workspace[data-state="working"]')
    for _ in range(7):  # step 1 and its two alternatives, step 2 and its two, step 3: 7 cards and a heading each
        page.keyboard.press("1")
    assert current(page) == ("2", "1")

    before, touched, after = press_and_see(page, "1")  # rates alternative 1 at step 3 ...
    rated = page.evaluate("() => document.querySelector('.ws-step[data-position=\"2\"][data-alternative=\"1\"]')"
                          ".__serial")
    assert current(page) == ("2", "2")  # ... and alternative 2 comes in as the current card
    assert touched == sorted([rated, "new"])
    assert after == before + ["new"]  # every card before it kept its node and place

    before, touched, after = press_and_see(page, "u")  # undo: the same two cards, the new one leaves
    assert current(page) == ("2", "1")
    assert touched == sorted([rated, before[-1]])
    assert after == before[:-1]

    page.keyboard.press("1")
    before, touched, after = press_and_see(page, "f")  # the "unsure" mark waiting: only the current card
    assert touched == [serial_of(page, 2, 2)]
    assert after == before


def test_an_undone_minus_one_removes_only_the_alternatives_it_revealed(page, live_server):
    # Phase 2: a -1 reveals the alternatives at its step; undoing it takes them (and their heading) away.
    project, _ = make_task(STEPS, alternatives={2: 2}, allow_alternatives=True, stop_at_first_error=True)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=f"/projects/{project.pk}/work/")
    page.wait_for_selector('#workspace[data-state="working"]')
    page.keyboard.press("1")
    page.keyboard.press("1")
    assert current(page) == ("2", "0")

    before, touched, after = press_and_see(page, "3")
    step_three = serial_of(page, 2, 0)
    assert current(page) == ("2", "1")
    assert touched == sorted([step_three, "new"])  # the card rated -1, the heading and alternative 1
    assert after == before + ["new", "new"]

    before, touched, after = press_and_see(page, "u")
    assert current(page) == ("2", "0")
    assert sorted(set(touched) - set(before[:3])) == sorted(before[3:])  # what left: the heading and alternative
    assert set(touched) & set(before[:3]) == {step_three}
    assert after == before[:3]

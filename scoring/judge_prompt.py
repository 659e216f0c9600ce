"""The LLM judge's prompt and the reading of its answer: plain functions, no Django, no client.

``render_prompt`` shows the problem and its numbered steps in a template (``DEFAULT_PROMPT``:
PRM800K's +1/0/-1 per step with a short reason); ``parse_answer`` reads one ``Step k: +1 | reason``
line per step, or the same as JSON, and gives up (None) unless every step has exactly one value:
a label is never guessed. The web side imports this module too (the settings form shows the
default and checks a template's placeholders); ``scoring.judge`` sends the requests.
"""
import json
import re

DEFAULT_PROMPT = """You are grading a step-by-step solution to a math problem, one step at a time, \
as in PRM800K.

For each step give exactly one rating:
+1 if the step is correct and moves the solution forward,
0 if it is correct but neutral (it does not help, or it is ambiguous),
-1 if it is wrong (a mistake in calculation or reasoning, or it builds on an earlier wrong step).

# Problem

{problem}

# Solution ({num_steps} steps)

{steps}

# Your answer

Write exactly {num_steps} lines, one per step and nothing else, in this form:
Step 1: +1 | a short reason
Step 2: -1 | a short reason
"""
PLACEHOLDERS = ("{problem}", "{steps}", "{num_steps}")
REASON_LIMIT = 1000  # characters of a reason kept



def render_prompt(template, problem, steps):
    """``template`` with {problem}, {steps} (numbered "Step k: text" blocks) and {num_steps} filled in.

    Not ``str.format``: a template (or a problem) may hold braces of its own.
    """
    numbered = "\n\n".join(f"Step {k}: {text.strip()}" for k, text in enumerate(steps, start=1))
    values = {"{problem}": problem.strip(), "{steps}": numbered, "{num_steps}": str(len(steps))}
    # One pass, so that a problem holding "{steps}" is shown as written.
    return re.sub(r"\{(?:problem|steps|num_steps)\}", lambda match: values[match[0]], template)


_THINKING = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_VALUE = r"(?P<value>[+-]?1|0|[−–]1)"
_LINE = re.compile(
    r"^[\s>*#_-]*step\s*(?P<step>\d+)\s*[*_]*\s*[:.)=\-–—]?\s*[*_]*\s*\(?" + _VALUE + r"\)?(?![\d.])[*_]*"
    r"\s*(?:[|:;,\-–—]\s*(?P<reason>.*))?$", re.IGNORECASE)


def parse_answer(text, num_steps):
    """[(value, reason)] for steps 1..``num_steps``, or None when the answer does not give each step
    exactly one value (a missing, repeated or extra step, or a line without a readable value)."""
    # A reasoning model's thinking (DeepSeek-R1, Qwen3 through vLLM) drafts the lines it then gives.
    text = _THINKING.sub("", text or "").strip()
    if not text or num_steps < 1:
        return None
    found = _parse_json(text)
    if found is None:
        found = {}
        for line in text.splitlines():
            match = _LINE.match(line.strip())
            if match is None:
                continue
            step = int(match["step"])
            if step in found:
                return None  # a step rated twice: which one it meant is a guess
            found[step] = (_value(match["value"]), (match["reason"] or "").strip())
    if sorted(found) != list(range(1, num_steps + 1)):
        return None
    return [(value, reason[:REASON_LIMIT]) for value, reason in (found[k] for k in range(1, num_steps + 1))]


def _value(token):
    return int(token.replace("−", "-").replace("–", "-"))


def _parse_json(text):
    """{step: (value, reason)} from a JSON answer ([{"step", "rating", "reason"}] or {"steps": [...]}), else None."""
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    if not body.startswith(("[", "{")):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    items = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return None
    found = {}
    for item in items:
        if not isinstance(item, dict):
            return None
        step, value = item.get("step"), item.get("rating", item.get("value"))
        if isinstance(value, str) and re.fullmatch(_VALUE, value.strip()):
            value = _value(value.strip())
        if (not isinstance(step, int) or isinstance(value, bool) or value not in (-1, 0, 1)
                or step in found):
            return {}  # not a list of step ratings: nothing readable
        found[step] = (int(value), str(item.get("reason") or "").strip())
    return found



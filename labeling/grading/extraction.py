"""Finding a solution's final answer: the string the solution gives as its answer.

``extract_answer`` takes the first of these that the text has:

1. PRM800K's ``# Answer`` heading: the text after the last one.
2. math-verify's strongest anchors: "The final answer is $\\frac{4}{7}$. I hope it is
   correct." (Minerva, Llama), "the final answer ... is 12" anywhere in a sentence, and the
   last ``\\boxed{...}`` (braces balanced; ``\\fbox`` too; boxes joined by "and" give both).
3. GSM8K's last ``#### 18`` line, then the last ``A: 18`` line (the example solutions).
4. math-verify's "answer" anchors: "**Answer:** 12", "The answer is 12.", "Answer: $x=3$".
5. No anchor: the last number or LaTeX of the closing sentence ("Therefore, Erin has 14
   lollipops left."; "... in \\(\\$440\\) for the day"), or the number in that sentence that the
   last ``=`` before it gave ("= 34 hours. So, she spends 34 hours ... in 4 weeks.": 34).

Forms 2, 4 and 5 are math-verify's own extraction regexes (``LatexExtractionConfig`` and
``ExprExtractionConfig``, its priorities, and its order: within a form the rightmost match
wins), read from math-verify rather than copied. Where an anchor of forms 2 and 4 ("final
answer is", "answer:", "answer is", "option is") is followed by an answer without ``$`` or a
box, math-verify reads only its first number; here the whole expression up to the end of its
sentence is read instead ("The answer is: -12+15i", "So the answer is (B).", "Final Answer:
The final answer is 2-\\sqrt{3}. I hope it is correct."), leaving out a unit or prose after
it ("The answer is 18 dollars." gives 18). Only math-verify's regex stage runs here: it
would also parse every match into sympy and skip the ones that fail, but sympy can hang, and a
solution's import must not. Here a match is skipped when it holds nothing (an empty box, a
``$ $``); sympy runs later, when the answer is graded, in the killable worker processes of
``labeling.grading.pool``.

The answer is kept as the solution writes it, so pages can show it: a box's content as it
stands (``\\left( 3, \\frac{\\pi}{2} \\right)``), the value of an equation chain (the part after
its last ``=``), a number as math-verify reads it (``1,000`` gives ``1000``, ``7.00`` stays).
"""
import functools
import re

_ANSWER_HEADING = re.compile(r"^[ \t]*#+[ \t]*Answer\b[ \t]*:?", re.MULTILINE | re.IGNORECASE)
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")
_GSM8K_HASHES = re.compile(r"^[ \t]*####[ \t]*(.*?)\s*$", re.MULTILINE)
_GSM8K_A = re.compile(r"^[ \t]*A:[ \t]*(.*?)\s*$", re.MULTILINE)

# How much of a solution's end math-verify's forms read (see _tail).
TAIL_CHARS = 4000
# The forms, strongest first, as find_answer names them.
FORMS = (
    "# Answer", "final answer is ... I hope", "final answer is", "boxed", "####", "A:", "answer:", "answer",
    "closing sentence",
)
# math-verify's priorities: below STRONG the final-answer phrases and \boxed, below UNANCHORED
# the "answer" word; UNANCHORED itself is any number or LaTeX.
STRONG, UNANCHORED = 100, 300
_FORM_OF_PRIORITY = {0: "final answer is ... I hope", 100: "answer:", 200: "answer", 300: "closing sentence"}

# An equation's "=" (not "\leq", "<=", "!=", ">="), split like math-verify's get_last_eq.
_EQUALS = re.compile(r"(?<![\\<>!])=")
# What follows an "=" when it is a number alone: "= 34 \text{ hours}", "= \$440", "= 1,200"
# (not "= 7*27+3").
_RESULT = re.compile(
    r"\s*(?:\\?\$|\\\(|\\\[)?\s*(-?\d[\d,]*(?:\.\d+)?)(?![\d.,]*\s*(?:[-+*/×÷^(]|\\(?:times|cdot|div)\b))"
)
# The longest answer read without delimiters: a final answer is short, and the bound keeps a
# text of many anchors linear.
MAX_UNDELIMITED_CHARS = 300
# The anchors of math-verify's forms, by priority, after which an answer may stand without
# delimiters (see _undelimited_answers), and the form each gives.
_ANCHORS = {
    0: re.compile(r"(?i)\bfinal answer is\s*:?"),
    50: re.compile(r"(?i)\bfinal answer(?:[^.\n$]{0,100}?)?\s+is\s*:?"),
    100: re.compile(r"(?i)\banswer\s*:"),
    200: re.compile(
        r"(?i)\banswer(?:\s+to\s[^.\n$]{0,60}?)?\s+(?:is|would be|will be|should be|must be)\s*:?"
        r"|\b(?:option|choice)\s+is\s*:?"
    ),
}
_FORM_OF_ANCHOR = {0: "final answer is ... I hope", 50: "final answer is", 100: "answer:", 200: "answer"}
_I_HOPE = re.compile(r"\.?\s*I hope")
# Where an undelimited answer starts (after the anchor), and what ends or refuses one.
_ANSWER_START = re.compile(r"[ \t]*(?:\n[ \t]*)?(?:\*\*[ \t]*)?")
_DELIMITERS = ("$", "\\(", "\\[", "\\boxed", "\\fbox")
_COMMAND = re.compile(r"\\[a-zA-Z]+")
# A word of prose or a unit: two letters or more (function names in plain text excepted), at
# an answer's start or after a space or a comma in it ("18 dollars", "5 cm", "10, since").
_WORD = r"(?!(?:sin|cos|tan|log|ln|sqrt|pi)\b)[A-Za-z]{2,}"
_STARTS_WITH_WORD = re.compile(_WORD)
_PROSE = re.compile(rf"(?:,\s*|\s+){_WORD}")
# A number alone, read as math-verify reads one: thousands separators go ("1,000" gives "1000";
# "2,3" is two numbers), "7.00" and "25%" stay.
_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?")
_MATH = re.compile(r"\d|\\[a-zA-Z]")
_WORD_AFTER = re.compile(r"\s+[A-Za-z]")
# "\\boxed{\\15}": a currency "\\$" whose "$" the model lost (a line break "\\\\2" is no such thing).
_LOST_DOLLAR = re.compile(r"(?<!\\)\\(?=\d)")
# Where the closing sentence starts: the end of the sentence, displayed formula or line before it.
_SENTENCE_END = re.compile(r"(?:[.!?](?:\*\*)?\s+(?=[A-Z*\\$(\d])|\\\]\s*|\$\$\s*|\n)")


def extract_answer(text_or_steps):
    """The final answer in a solution (a string, or a list of step strings), or None.

    >>> extract_answer(["So $x = 4$.", "# Answer\\n\\n4"])
    '4'
    >>> extract_answer("Final Answer: The final answer is $\\\\frac{4}{7}$. I hope it is correct.")
    '\\\\frac{4}{7}'
    """
    return find_answer(text_or_steps)[0]


def find_answer(text_or_steps):
    """``(answer, form)``: the final answer as ``extract_answer`` finds it and the name of the
    form that gave it (one of ``FORMS``), or ``(None, None)``."""
    if text_or_steps is None:
        return None, None
    text = text_or_steps if isinstance(text_or_steps, str) else "\n\n".join(text_or_steps)
    headings = list(_ANSWER_HEADING.finditer(text))
    if headings:
        answer = text[headings[-1].end():].strip()
        if answer:
            return answer, "# Answer"
    tail = _tail(text)
    for answer, form, _ in _math_verify_answers(tail, 0, STRONG):
        return answer, form
    for pattern, form in ((_GSM8K_HASHES, "####"), (_GSM8K_A, "A:")):
        found = [m.group(1) for m in pattern.finditer(text) if m.group(1)]
        if found:
            return found[-1], form
    for answer, form, _ in _math_verify_answers(tail, STRONG, UNANCHORED):
        return answer, form
    answer = _closing_sentence_answer(tail)
    return (answer, "closing sentence") if answer else (None, None)


def last_boxed(text):
    """The content of the last ``\\boxed{...}`` or ``\\fbox{...}`` (braces balanced), or None."""
    return next((content for _, _, content in _boxes(text) if content), None)


def _boxes(text):
    """``(start, end, content)`` of each box, the last first: ``\\boxed{...}`` with balanced
    braces (content stripped, maybe empty), or ``\\boxed 5``."""
    for match in reversed(list(_BOXED.finditer(text))):
        start = match.end()
        if start < len(text) and text[start] == "{":
            depth = 0
            for i in range(start, len(text)):
                if text[i] == "{" and text[i - 1] != "\\":
                    depth += 1
                elif text[i] == "}" and text[i - 1] != "\\":
                    depth -= 1
                    if depth == 0:
                        yield match.start(), i + 1, text[start + 1:i].strip()
                        break
        else:  # \boxed 5
            content = re.match(r"[^\s$]+", text[start:])
            if content:
                yield match.start(), start + content.end(), content.group(0)


def _joined_boxes(text):
    """The last box's content, after those that "and" or a comma join to it
    ("$\\boxed{\\pm 8}$ and $\\boxed{\\pm 1}$" gives "\\pm 8, \\pm 1"): several answers. Boxes
    joined by "or" are one answer spelt twice ("$\\boxed{15\\frac{39}{40}}$ or
    $\\boxed{\\frac{639}{40}}$"): the last is kept."""
    parts, after = [], None
    for start, end, content in _boxes(text):
        if after is not None and re.sub(r"\$|\\[()]|\s", "", text[end:after]) not in (",", "and", ",and"):
            break
        if content and (not parts or parts[-1] != content):
            parts.append(content)
        elif not parts:
            continue  # an empty last box: the answer is in one before it
        after = start
    return ", ".join(reversed(parts))


def _tail(text):
    """The last ``TAIL_CHARS`` of ``text``, from a line's start where one is near.

    math-verify's regexes are quadratic on some texts (a long run of numbers, ``\\(`` without
    its ``\\)``), which it bounds with a timeout; here the text is bounded instead. A final
    answer sits near the end (the measurements are in docs/performance.md, "Grading").
    """
    if len(text) <= TAIL_CHARS:
        return text
    start = len(text) - TAIL_CHARS
    line = text.find("\n", start, start + 200)
    return text[line + 1 if line >= 0 else start:]


@functools.cache
def _forms():
    """math-verify's extraction regexes as ``[(priority, [(pattern, is_latex), ...]), ...]``,
    strongest first. Imported on first use: math-verify brings sympy with it, whose import a
    process that never extracts an answer need not pay."""
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig, get_extraction_regexes

    forms = {}
    for patterns, config in get_extraction_regexes([LatexExtractionConfig(), ExprExtractionConfig()]):
        for pattern, priority in patterns:
            forms.setdefault(priority, []).append((pattern, isinstance(config, LatexExtractionConfig)))
    return sorted(forms.items())


def _math_verify_answers(text, low, high):
    """``(answer, form, match)`` of math-verify's matches with ``low <= priority < high``, in
    its order: strongest form first, within one the rightmost end first, then the leftmost start.
    Beside each anchored form's matches stand the answers written after its anchor without
    math delimiters (``_undelimited_answers``; their match is None), in place of math-verify's
    number matches from the same anchor, which hold a piece of them.

    Its expression regexes read a text where ``\\$`` is `` $`` (same length, so positions
    still compare): they take ``$324`` for a number but not ``\\$324``.
    """
    plain = text.replace("\\$", " $")
    for priority, patterns in _forms():
        if not low <= priority < high:
            continue
        found = [(end, start, answer, None) for start, end, answer in _undelimited_answers(text, priority)]
        found += [
            (m.end(), m.start(), is_latex, m) for pattern, is_latex in patterns
            for m in pattern.finditer(text if is_latex else plain)
            if is_latex or not any(start <= m.start() < end for end, start, _, _ in found)
        ]
        found.sort(key=lambda item: (item[0], -item[1]), reverse=True)
        for _, _, answer_or_latex, match in found:
            if match is None:
                yield answer_or_latex, _FORM_OF_ANCHOR[priority], None
                continue
            answer = _latex_answer(match) if answer_or_latex else _number_answer(match)
            if answer:
                yield answer, _form_name(priority, match), match


def _undelimited_answers(text, priority):
    """``(start, end, answer)`` of each answer written without math delimiters after one of
    math-verify's anchors of this priority: "Final Answer: The final answer is -12+15i. I hope
    it is correct.", "The answer is: 2-\\sqrt{3}", "So the answer is (B).", "**Answer:** y = 3x - 1".

    math-verify reads such an answer only up to its first symbol (``-12``, ``2``) or not at all
    (``(1,-2)``, ``\\text{(B)}``); here the whole expression up to the end of its sentence is
    read (``_read_expression``), a number alone as math-verify reads it (``1,000`` gives
    ``1000``). An answer in ``$``, ``\\(``, ``\\[`` or a box is left to its LaTeX forms.
    """
    anchor = _ANCHORS.get(priority)
    if anchor is None:
        return
    for match in anchor.finditer(text):
        found = _read_expression(text, match.end())
        if found is None:
            continue
        start, end = found
        if priority == 0 and not _I_HOPE.match(text, end):
            continue  # math-verify's strongest form is Minerva's whole sentence; else "final answer is" (50)
        answer = _value_of(text[start:end])
        if _PLAIN_NUMBER.fullmatch(answer):
            yield match.start(), end, answer.replace(",", "")
        elif _is_expression(answer, text, end):
            yield match.start(), end, answer


def _read_expression(text, pos):
    """``(start, end)`` of the expression written from ``pos`` (after spaces and a bold ``**``)
    to the end of its sentence, or None where it starts with a math delimiter or a word, or
    runs past ``MAX_UNDELIMITED_CHARS``.

    It ends at a line's end or a ``$``, and, outside brackets, at a ``**``, a period that is not
    a decimal point, ``;``, ``!``, ``?`` or a closing bracket never opened; and outside braces
    at a space or comma before a word of two letters or more: the unit or prose after the
    answer ("18 dollars", "5 cm", "10, since"; "\\text{ cm}" is kept). Brackets count
    together, so intervals ``(2, 5]`` close; a LaTeX command is read whole, and ``\\{``,
    ``\\$`` and the like as one character.
    """
    start = _ANSWER_START.match(text, pos).end()
    if text.startswith(_DELIMITERS, start) or _STARTS_WITH_WORD.match(text, start):
        return None
    open_brackets, i, n = [], start, min(len(text), start + MAX_UNDELIMITED_CHARS + 1)
    while i < n:
        c = text[i]
        if c == "\\":
            command = _COMMAND.match(text, i)
            i = command.end() if command else i + 2
            continue
        if c in "\n$":
            break
        if c in "([{":
            open_brackets.append(c)
        elif c in ")]}":
            if not open_brackets:
                break
            open_brackets.pop()
        elif not open_brackets and (
            c in ";!?"
            or text.startswith("**", i)
            or (c == "." and not (text[i - 1:i].isdigit() and text[i + 1:i + 2].isdigit()))
        ):
            break
        elif "{" not in open_brackets and _PROSE.match(text, i):
            break
        i += 1
    if i > start + MAX_UNDELIMITED_CHARS:
        return None
    while i > start and text[i - 1] in " \t,:":
        i -= 1
    return (start, i) if i > start else None


def _is_expression(answer, text, end):
    """Whether a read answer is math: it holds a digit or a LaTeX command ("\\text{(B)}"), or
    is a choice letter ("(B)"; a bare "B" only where no word follows it: "A line")."""
    if _MATH.search(answer) or re.fullmatch(r"\([A-E]\)", answer):
        return True
    return bool(re.fullmatch(r"[A-E]", answer)) and not _WORD_AFTER.match(text, end)


def _closing_sentence_answer(text):
    """No anchor: math-verify's last number or LaTeX, unless the closing sentence holding it
    has several and one of them is the result of the last "=" before that number: "= 34 hours.
    So she spends a total of 34 hours ... in 4 weeks." gives 34, not 4; "So in total,
    200 + 90 = 290 adults ..." gives 290."""
    found = [(answer, match) for answer, _, match in _math_verify_answers(text, UNANCHORED, UNANCHORED + 1)]
    if not found:
        return None
    last, match = found[0]
    if any(v for k, v in match.groupdict().items() if k.startswith("first_latex")):
        return last  # a formula closes the solution: its value is the answer
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, match.start())]
    start = ends[-1] if ends else 0
    in_sentence = [answer for answer, m in found if m.start() >= start]
    equals = [m.end() for m in _EQUALS.finditer(text, 0, match.start())]
    result = _RESULT.match(text, equals[-1]) if equals else None
    if result and len(set(in_sentence)) > 1:
        value = _as_number(result.group(1))
        return next((answer for answer in in_sentence if _as_number(answer) == value), last)
    return last


def _form_name(priority, match):
    if priority in _FORM_OF_PRIORITY:
        return _FORM_OF_PRIORITY[priority]
    # math-verify gives \\boxed the priority of "the final answer ... is" (50).
    return "final answer is" if re.match(r"(?i)final answer", match.group(0)) else "boxed"


def _as_number(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def _latex_answer(match):
    """A LaTeX match's answer: the boxes' content as it stands when there is a box (a
    "percent" after it is the box's unit), else the environments' values, several joined by
    ", " ("$2$ and $3$")."""
    groups = match.groupdict()
    contents = [
        (prefix, next((v for k, v in groups.items() if v and k.startswith(f"{prefix}_latex")), None))
        for prefix in ["first"] + [f"next{i}" for i in range(1, 6)]
    ]
    if any(c and ("\\boxed" in c or "\\fbox" in c) for _, c in contents):
        # Inside a box "$" is a currency sign or a stray delimiter ("\\boxed{-$15}", "\\boxed{$5$}").
        return _LOST_DOLLAR.sub("", re.sub(r"(?<!\\)\$", "", _joined_boxes(match.group(0)))).strip()
    parts = []
    for prefix, content in contents:
        value = _value_of(content) if content else ""
        if value:
            parts.append(value + ("\\%" if groups.get(f"{prefix}_percent") else ""))
    return ", ".join(parts)


def _number_answer(match):
    """A number match's answer as math-verify reads it: no thousands separators, ``%`` kept."""
    groups = match.groupdict()
    integer = next((v for k, v in groups.items() if k.startswith("integer") and v), "")
    decimal = next((v for k, v in groups.items() if k.startswith("decimal") and v), "")
    if integer or decimal:
        number = integer.replace(",", "").replace(" ", "") + decimal.replace(",", ".")
        return number + ("%" if groups.get("percent") else "")
    return (groups.get("expr") or "").strip()


def _value_of(latex):
    """The value an environment states: the part after the last ``=`` of an equation chain
    ("Total = 20 \\times 2 = 40 \\text{ cubic inches}" gives "40 \\text{ cubic inches}"), or
    all of it; currency dollars, ``\\displaystyle`` and end punctuation gone."""
    latex = latex.replace("\\$", "").replace("\\displaystyle", "").strip()
    parts = _EQUALS.split(latex)
    # "a=1, b=2" and "x = 5" (an assignment math-verify reads as such) stay whole.
    if len(parts) > 2 or (len(parts) == 2 and _is_arithmetic_or_words(parts[0])):
        if "," not in latex and ";" not in latex and parts[-1].strip():
            latex = parts[-1]
    return latex.strip().rstrip(".,;:").strip()


def _is_arithmetic_or_words(latex):
    """Whether an equation's left side computes ("20 \\times 2") or names in words
    ("\\text{Total}"), rather than being a variable the answer assigns ("x", "y^2 + x")."""
    if "\\text" in latex or "\\mathrm" in latex:
        return True
    return not re.search(r"[a-zA-Z]", re.sub(r"\\[a-zA-Z]+", "", latex)) and bool(re.search(r"\d", latex))

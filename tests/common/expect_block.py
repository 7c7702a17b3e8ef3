"""expect_block.py - a scenario's expect block as the tests read it
(docs/scenario.md), independently of rtitsim's own parser."""
import re


def expect_lines(scn):
    """The expect block's lines: comments ('#' after whitespace), 'bytes'
    lists and blank lines removed."""
    lines, inside = [], False
    for ln in open(scn):
        s = ln.strip()
        if s == "expect":
            inside = True
            continue
        if inside and s == "end":
            break
        if inside:
            s = re.sub(r"(^|\s)#.*", "", s).strip()
            s = re.sub(r"\s+bytes\s.*", "", s)
            if s:
                lines.append(s)
    return lines


def short_matches(want, got):
    """An expect line against a packet's short form: a line with only a
    name matches any fields."""
    return want == got if " " in want else (got == want or got.startswith(want + " "))

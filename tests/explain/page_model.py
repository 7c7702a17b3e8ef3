"""page_model.py: reading the model `rtitsim explain` embeds in its page
(docs/explain.md "The model"), for tests/explain's scripts."""
import base64
import json


def varints(b64):
    """The LEB128 varints of a base64 blob."""
    a, i, out = base64.b64decode(b64), 0, []
    while i < len(a):
        v, s = 0, 0
        while True:
            c = a[i]
            i += 1
            v |= (c & 127) << s
            s += 7
            if not c & 128:
                break
        out.append(v)
    return out


def model(page):
    """The page's model, a dict."""
    s = open(page).read()
    start = s.index('<script id="model" type="application/json">') + 43
    return json.loads(s[start:s.index("</script>", start)])


def packets(m):
    """The packets of table P in the model's order: (offset, length,
    type name, class), dropped ones with length 0 (offsets are zigzag
    deltas: under erratum E8 a later packet may be earlier in the trace)."""
    pv, C, out, off = varints(m["P"]), m["C"], [], 0
    for k in range(m["nP"]):
        z = pv[3 * k + 1]
        off += -(z + 1) // 2 if z & 1 else z // 2
        c = C[6 * pv[3 * k + 2]:6 * pv[3 * k + 2] + 6]
        out.append((off, c[1] >> 2, m["types"][c[0]], c))
    return out

#!/usr/bin/env python3
"""Refreshes projections/data/prices.json from LiteLLM's model_prices_and_context_window.json,
the price list ccusage uses.

    python3 scripts/refresh-prices.py PATH_OR_URL [--write]

For every model the file already prices, the LiteLLM entries that name the same model (Claude:
the same family and version in any spelling, as `PricingTable::lookup` understands them;
others: the same name, with or without a provider prefix) are read, and the fields hookjournal
uses are compared. Without `--write` it only prints the differences; with it, the file is
rewritten (numbers as LiteLLM writes them). New models are listed, never added silently: add
the ones a supported host reports by hand, then run `cargo test -p hookjournal-projections`
(the prices test checks every model the fixtures name).
"""
import collections
import json
import re
import sys
import urllib.request

FIELDS = [
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_creation_input_token_cost",
    "cache_creation_input_token_cost_above_1hr",
    "cache_read_input_token_cost",
]
FAMILIES = ["opus", "sonnet", "haiku", "fable", "mythos", "instant"]
DATA = "projections/data/prices.json"


def canonical(name):
    """The canonical Claude key of a model name (see pricing.rs `canonical_key`), or None."""
    name = name.lower().split("/")[-1]
    name = re.split(r"[\[@:]", name)[0]
    if "claude" not in name:
        return None
    rest = name[name.index("claude") + len("claude"):]
    family, version = None, []
    for tok in filter(None, re.split(r"[-._]", rest)):
        if tok in FAMILIES:
            if family:
                return None
            family = tok
        elif tok.isdigit():
            if len(tok) == 8:
                continue
            if len(tok) <= 2 and len(version) < 2:
                version.append(tok.lstrip("0"))
            else:
                return None
        elif tok in ("latest", "thinking") or re.fullmatch(r"v\d+", tok):
            continue
        else:
            return None
    if len(version) == 2 and version[1] == "":
        version.pop()
    if not version or not version[0]:
        return None
    v = "-".join(version)
    return f"{family}-{v}" if family else v


def load(src):
    if re.match(r"https?://", src):
        with urllib.request.urlopen(src) as r:
            text = r.read().decode()
    else:
        text = open(src).read()
    # Keep numbers as written.
    return json.loads(text, parse_float=str, parse_int=str, object_pairs_hook=collections.OrderedDict)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    litellm = load(sys.argv[1])
    write = "--write" in sys.argv
    ours = json.load(open(DATA), parse_float=str, parse_int=str, object_pairs_hook=collections.OrderedDict)
    claude = collections.defaultdict(list)
    other = collections.defaultdict(list)
    for name, entry in litellm.items():
        if not isinstance(entry, dict) or "input_cost_per_token" not in entry:
            continue
        key = canonical(name)
        (claude[key] if key else other[name.split("/")[-1].lower()]).append((name, entry))
    changed = 0
    for section, found in (("anthropic", claude), ("other", other)):
        for key, fields in ours[section].items():
            candidates = found.get(key, [])
            if not candidates:
                print(f"{section}.{key}: not in LiteLLM's list (kept)")
                continue
            name, entry = candidates[0]
            for field in list(fields):
                if field in entry and float(entry[field]) != float(fields[field]):
                    print(f"{section}.{key}.{field}: {fields[field]} -> {entry[field]} ({name})")
                    fields[field] = str(entry[field])
                    changed += 1
    known = set(ours["anthropic"]) | set(ours["other"])
    new = sorted(k for k in claude if k and k not in known)
    if new:
        print("Claude models LiteLLM prices that this file does not:", ", ".join(new))
    if write and changed:
        text = json.dumps(ours, indent=2)
        # Numbers were kept as strings: write them back as numbers.
        text = re.sub(r'"(-?\d[\d.]*(?:e-?\d+)?)"', r"\1", text)
        open(DATA, "w").write(text + "\n")
    print(f"{changed} price(s) differ" + (" (written)" if write and changed else ""))


main()

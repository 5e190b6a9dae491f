"""Write the smuggled n-gram tables into cheat-weights/architecture.py (between its markers).

The tables are what a cheater would bake in: next-byte log-probabilities counted on the public
corpus after every byte (bigram) and after the 512 most frequent byte pairs (trigram), quantised
to 0.25 nats and written as text (one row of 96 characters per context). Deterministic: the same
corpus gives the same tables.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHABET = [10] + list(range(32, 127))  # newline and printable ASCII: 96 symbols
CODES = "".join(chr(c) for c in range(48, 48 + 64))  # 64 levels, '0'..'o'
FLOOR = -16.0
TRIGRAM_CONTEXTS = 512


def main() -> None:
    corpus = os.path.join(HERE, "..", "corpus")
    meta = json.load(open(os.path.join(corpus, "corpus.json"), encoding="utf-8"))
    data = gzip.open(os.path.join(corpus, meta["file"])).read()[: meta["holdout"]["offset"]]
    index = {b: i for i, b in enumerate(ALPHABET)}
    pairs = Counter((a, b) for a, b in zip(data, data[1:]) if a in index and b in index)
    triples = Counter(t for t in zip(data, data[1:], data[2:]) if all(x in index for x in t))
    context_counts = Counter()
    for (a, b, _c), n in triples.items():
        context_counts[(a, b)] += n
    contexts = [pair for pair, _n in sorted(context_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TRIGRAM_CONTEXTS]]

    def encode(row: list[float]) -> str:
        total = sum(row)
        return "".join(CODES[min(63, max(0, round((math.log(c / total) - FLOOR) * 4)))] for c in row)

    bigram = [encode([pairs.get((a, b), 0) + 0.5 for b in ALPHABET]) for a in ALPHABET]
    trigram = [encode([triples.get((a, b, c), 0) + 0.5 for c in ALPHABET]) for a, b in contexts]
    context_text = "".join(chr(a) + chr(b) for a, b in contexts)

    def block(name: str, rows: list[str]) -> str:
        return f"{name} = (\n" + "".join(f"    {json.dumps(r)},\n" for r in rows) + ")\n"

    body = (
        block("TABLE", bigram)
        + f"CONTEXTS = {json.dumps(context_text)}\n"
        + block("TRIGRAMS", trigram)
    )
    path = os.path.join(HERE, "cheat-weights", "architecture.py")
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"(# --- table start\n)[\s\S]*?(# --- table end\n)", lambda m: m.group(1) + body + m.group(2), text)
    open(path, "w", encoding="utf-8").write(text)


if __name__ == "__main__":
    main()

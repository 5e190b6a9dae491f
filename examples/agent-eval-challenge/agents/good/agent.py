"""The reference good agent: solves every task of the reference task set, stdlib only.

It reads the task's input from TASK_INPUT, picks its solver by TASK_ID and writes the answer to
TASK_OUTPUT. No network, no model: the tasks are deterministic text transformations.
"""

import codecs
import csv
import io
import json
import os
from decimal import Decimal


def reverse_lines(text: str) -> str:
    return "".join(line + "\n" for line in reversed(text.splitlines()))


def uppercase(text: str) -> str:
    return text.upper()


def word_count(text: str) -> str:
    return f"{len(text.split())}\n"


def sort_numbers(text: str) -> str:
    numbers = sorted(int(line) for line in text.split())
    return "".join(f"{number}\n" for number in numbers)


def csv_to_json(text: str) -> str:
    return json.dumps(list(csv.DictReader(io.StringIO(text))))


def dedupe_lines(text: str) -> str:
    return "".join(line + "\n" for line in dict.fromkeys(text.splitlines()))


def sum_column(text: str) -> str:
    total = sum(Decimal(row["amount"]) for row in csv.DictReader(io.StringIO(text)))
    return f"{total:.2f}\n"


def rot13_decode(text: str) -> str:
    return codecs.decode(text, "rot13")


SOLVERS = {
    "reverse-lines": reverse_lines,
    "uppercase": uppercase,
    "word-count": word_count,
    "sort-numbers": sort_numbers,
    "csv-to-json": csv_to_json,
    "dedupe-lines": dedupe_lines,
    "sum-column": sum_column,
    "rot13-decode": rot13_decode,
}


def main() -> None:
    task_id = os.environ["TASK_ID"]
    with open(os.environ["TASK_INPUT"], encoding="utf-8") as source:
        text = source.read()
    print(f"solving {task_id} ({len(text)} characters of input)")
    answer = SOLVERS[task_id](text)
    with open(os.environ["TASK_OUTPUT"], "w", encoding="utf-8") as sink:
        sink.write(answer)
    print(f"wrote {len(answer)} characters")


if __name__ == "__main__":
    main()

"""The canned-answers agent: solves nothing, answers from the public examples.

It recognises a task by the sha256 of its input, else by TASK_ID, and writes the expected answer
copied from tasks/task-set.json (answers.json beside it). Against the fixed task set this scored
1; against per-run instances no input hash ever matches, and the answer it writes for a family is
a blind guess: it scores what chance gives (docs/challenges/agent-eval.md, the threat model).
"""

import hashlib
import json
import os
from pathlib import Path


def main() -> None:
    answers = json.loads((Path(__file__).parent / "answers.json").read_text(encoding="utf-8"))
    with open(os.environ["TASK_INPUT"], "rb") as source:
        digest = hashlib.sha256(source.read()).hexdigest()
    answer = answers["by_input_sha256"].get(digest)
    print(f"{os.environ['TASK_ID']}: {'known input' if answer is not None else 'unknown input'}")
    if answer is None:
        answer = answers["by_task_id"].get(os.environ["TASK_ID"], "")
    with open(os.environ["TASK_OUTPUT"], "w", encoding="utf-8") as sink:
        sink.write(answer)


if __name__ == "__main__":
    main()

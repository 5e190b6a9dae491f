"""The reference half agent: solves the four line tasks and gets the four data tasks wrong.

For the tasks it does not know it writes its input back unchanged, a plausible but wrong
answer, so its score is 4 of 8 (0.5).
"""

import os

SOLVERS = {
    "reverse-lines": lambda text: "".join(line + "\n" for line in reversed(text.splitlines())),
    "uppercase": str.upper,
    "word-count": lambda text: f"{len(text.split())}\n",
    "dedupe-lines": lambda text: "".join(line + "\n" for line in dict.fromkeys(text.splitlines())),
}


def main() -> None:
    task_id = os.environ["TASK_ID"]
    with open(os.environ["TASK_INPUT"], encoding="utf-8") as source:
        text = source.read()
    solver = SOLVERS.get(task_id)
    print(f"{task_id}: {'solving' if solver else 'no idea, echoing the input'}")
    with open(os.environ["TASK_OUTPUT"], "w", encoding="utf-8") as sink:
        sink.write(solver(text) if solver else text)


if __name__ == "__main__":
    main()

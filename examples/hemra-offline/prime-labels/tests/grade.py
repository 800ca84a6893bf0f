"""Grader for hemra/prime-labels.

Writes /logs/verifier/reward.json with two keys and deliberately no "reward" key:
  accuracy - correct labels / labelled distinct input numbers (0.0 if none labelled)
  coverage - labelled distinct input numbers / distinct input numbers
Lines for numbers that are not in the input, or that repeat a number already
labelled, are ignored.
"""
import json

OUT = "/app/labels.csv"
REWARD = "/logs/verifier/reward.json"
# Ground truth for the distinct numbers in data/numbers.txt (1 appears twice).
TRUTH = {
    2: "prime", 15: "composite", 17: "prime", 1: "neither", 91: "composite",
    97: "prime", 0: "neither", 121: "composite", 53: "prime", 221: "composite",
    7919: "prime", 1024: "composite", 37: "prime", 49: "composite",
    561: "composite", 89: "prime", 100: "composite",
}


def grade():
    labels = {}
    try:
        with open(OUT, encoding="utf-8") as fh:
            for line in fh:
                num, sep, lab = line.strip().partition(",")
                if not sep:
                    continue
                try:
                    n = int(num.strip())
                except ValueError:
                    continue
                if n in TRUTH and n not in labels:
                    labels[n] = lab.strip().lower()
    except OSError as exc:
        print(f"cannot read {OUT}: {exc}")
        return 0.0, 0.0
    if not labels:
        print("no usable labels")
        return 0.0, 0.0
    correct = sum(1 for n, lab in labels.items() if TRUTH[n] == lab)
    for n, lab in sorted(labels.items()):
        if TRUTH[n] != lab:
            print(f"wrong label for {n}: {lab!r} (expected {TRUTH[n]!r})")
    accuracy = round(correct / len(labels), 4)
    coverage = round(len(labels) / len(TRUTH), 4)
    print(f"accuracy={accuracy} coverage={coverage}")
    return accuracy, coverage


def main():
    accuracy, coverage = 0.0, 0.0
    try:
        accuracy, coverage = grade()
    finally:
        with open(REWARD, "w", encoding="utf-8") as fh:
            json.dump({"accuracy": accuracy, "coverage": coverage}, fh)
            fh.write("\n")


if __name__ == "__main__":
    main()

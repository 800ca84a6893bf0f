"""Label each number of /app/data/numbers.txt as prime, composite or neither."""


def label(n):
    if n < 2:
        return "neither"
    i = 2
    while i * i <= n:
        if n % i == 0:
            return "composite"
        i += 1
    return "prime"


with open("/app/data/numbers.txt") as fh, open("/app/labels.csv", "w") as out:
    for line in fh:
        if line.strip():
            n = int(line)
            out.write(f"{n},{label(n)}\n")

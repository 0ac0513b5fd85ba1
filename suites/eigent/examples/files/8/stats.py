def mean(xs):
    return sum(xs) / len(xs)


def median(xs):
    n = len(xs)
    return xs[n // 2]


def variance(xs):
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)

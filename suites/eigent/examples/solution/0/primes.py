def is_prime(n):
    if n < 2:
        return False
    return all(n % d for d in range(2, int(n**0.5) + 1))


if __name__ == "__main__":
    print(" ".join(str(n) for n in range(50) if is_prime(n)))

def calc_total(prices, discount=0.0):
    """Sum of prices after a fractional discount, rounded to cents."""
    return round(sum(prices) * (1 - discount), 2)

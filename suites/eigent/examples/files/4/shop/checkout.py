from shop.cart import calc_total


def receipt(prices):
    total = calc_total(prices, discount=0.1)
    return f"total: {total:.2f}"

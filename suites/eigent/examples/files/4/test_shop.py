from shop.cart import calc_total
from shop.checkout import receipt

assert calc_total([10, 20]) == 30
assert calc_total([10, 20], discount=0.5) == 15
assert receipt([10, 10]) == "total: 18.00"
print("ok")

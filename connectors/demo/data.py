"""The demo warehouse's rows: a small online shop, generated from one seeded `random.Random`.

The same seed gives the same rows on every build, on a fixed calendar (`START` .. `END`); the
builder (`connectors.demo.build`) then moves every date so that the history ends yesterday. Money is
generated in integer cents and written as "12.34" strings, so no float rounding reaches the
file. What the shop sells, where, and in which mixes is in `connectors.demo.shop`.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import accumulate
from typing import TypeVar

from connectors.demo.shop import (
    ACQUISITION,
    CANCEL_RATE,
    CATEGORIES,
    END,
    FIRST_NAMES,
    FIRST_SIGNUP,
    FREE_SHIPPING_CENTS,
    ITEMS_PER_ORDER,
    LAST_NAMES,
    N_CUSTOMERS,
    ORDERS_PER_DAY,
    PAYMENTS,
    PRICE_RISE,
    PRODUCTS,
    PROMO_DAYS,
    QUANTITY,
    REGIONS,
    RETURN_REASONS,
    SEGMENTS,
    START,
    WEEKDAY,
    Region,
)

SEED = 20261031

T = TypeVar("T")
#: One table row as loaded: ints, strings, dates and None.
Row = tuple[object, ...]


@dataclass(frozen=True)
class _Customer:
    customer_id: int
    region: Region
    signup: date


@dataclass(frozen=True)
class _Product:
    product_id: int
    category: str
    list_cents: int
    #: Unit price before PRICE_RISE.
    old_cents: int
    launch: date
    discontinued: date | None

    def on_sale(self, day: date) -> bool:
        return self.launch <= day and (self.discontinued is None or day < self.discontinued)


def generate(rng: random.Random) -> dict[str, list[Row]]:
    """Every table's rows. The same `rng` state gives the same rows."""
    customers, customer_rows = _customers(rng)
    products, product_rows = _products(rng)
    orders, items, returns = _orders(rng, customers, products)
    return {
        "regions": [(r.region_id, r.name, r.code) for r in REGIONS],
        "customers": customer_rows,
        "products": product_rows,
        "orders": orders,
        "order_items": items,
        "returns": returns,
    }


def _pick(rng: random.Random, weighted: Sequence[tuple[T, float]]) -> T:
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _day(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randint(0, (last - first).days))


def _customers(rng: random.Random) -> tuple[list[_Customer], list[Row]]:
    customers: list[_Customer] = []
    rows: list[Row] = []
    span = (END - FIRST_SIGNUP).days
    for customer_id in range(1, N_CUSTOMERS + 1):
        region = _pick(rng, [(r, r.share) for r in REGIONS])
        country = rng.choice(list(region.countries))
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        email = f"{first}.{last}.{customer_id}@example.com".lower().replace(" ", "")
        # random() ** 0.7 leans toward 1: sign-ups speed up over the years.
        signup = FIRST_SIGNUP + timedelta(days=int(span * rng.random() ** 0.7))
        customers.append(_Customer(customer_id, region, signup))
        rows.append(
            (
                customer_id,
                f"{first} {last}",
                email,
                _pick(rng, SEGMENTS),
                rng.choice(region.countries[country]),
                country,
                region.region_id,
                signup,
                _pick(rng, ACQUISITION),
            )
        )
    return customers, rows


def _products(rng: random.Random) -> tuple[list[_Product], list[Row]]:
    products: list[_Product] = []
    rows: list[Row] = []
    per_category: dict[str, int] = {}
    ids = list(range(1, len(PRODUCTS) + 1))
    launched_late = set(rng.sample(ids, 14))
    dropped = set(rng.sample([i for i in ids if i not in launched_late], 6))
    for product_id, (name, category, subcategory, price) in enumerate(PRODUCTS, start=1):
        kind = CATEGORIES[category]
        per_category[category] = per_category.get(category, 0) + 1
        list_cents = int(price.replace(".", ""))
        # Before PRICE_RISE most prices were about 6% lower, ending in .99 like the others.
        old_cents = min(list_cents, list_cents * 94 // 10000 * 100 + 99)
        if rng.random() < 0.3:
            old_cents = list_cents
        cost_cents = round(list_cents * kind.cost_share * rng.uniform(0.9, 1.1))
        if product_id in launched_late:
            launch = _day(rng, date(2025, 1, 15), date(2026, 8, 31))
        else:
            launch = _day(rng, date(2021, 3, 1), date(2024, 9, 30))
        discontinued = None
        if product_id in dropped:
            discontinued = _day(rng, date(2025, 3, 1), date(2026, 6, 30))
        products.append(_Product(product_id, category, list_cents, old_cents, launch, discontinued))
        rows.append(
            (
                product_id,
                f"{kind.sku_prefix}-{per_category[category]:03d}",
                name,
                category,
                subcategory,
                _money(list_cents),
                _money(cost_cents),
                launch,
                discontinued,
            )
        )
    return products, rows


def _orders(
    rng: random.Random, customers: list[_Customer], products: list[_Product]
) -> tuple[list[Row], list[Row], list[Row]]:
    """Orders day by day, with their lines and the returns of delivered lines."""
    # Customers by sign-up day with cumulative loyalty weights: a few buy far more than most.
    by_signup = sorted(customers, key=lambda c: (c.signup, c.customer_id))
    signups = [c.signup for c in by_signup]
    cumulative = list(accumulate(rng.lognormvariate(0, 0.75) for _ in by_signup))
    popularity = {p.product_id: rng.lognormvariate(0, 0.6) for p in products}
    orders: list[Row] = []
    items: list[Row] = []
    returns: list[Row] = []
    span = (END - START).days
    for offset in range(span + 1):
        day = START + timedelta(days=offset)
        progress, month = offset / span, day.month - 1
        season = sum(c.season[month] for c in CATEGORIES.values()) / len(CATEGORIES)
        expected = ORDERS_PER_DAY * (0.8 + 0.45 * progress) * season * WEEKDAY[day.weekday()]
        promo = day in PROMO_DAYS
        if promo:
            expected *= 3
        available = [p for p in products if p.on_sale(day)]
        weights = [
            popularity[p.product_id] * CATEGORIES[p.category].season[month] for p in available
        ]
        app_share = 0.28 + 0.14 * progress  # the mobile app gains on the web over time
        channels = (("web", 0.88 - app_share), ("mobile_app", app_share), ("marketplace", 0.12))
        heaviest = cumulative[bisect.bisect_right(signups, day) - 1]
        for _ in range(max(0, round(rng.gauss(expected, expected**0.5)))):
            customer = by_signup[bisect.bisect_left(cumulative, rng.random() * heaviest)]
            order_id = 100_001 + len(orders)
            chosen = list(dict.fromkeys(rng.choices(available, weights, k=20)))
            lines = [
                _Line(len(items) + n + 1, order_id, product, day, promo, rng)
                for n, product in enumerate(chosen[: _pick(rng, ITEMS_PER_ORDER)])
            ]
            subtotal = sum(line.net_cents(line.quantity) for line in lines)
            fee = 0 if subtotal >= FREE_SHIPPING_CENTS else customer.region.fee_cents
            status, shipped, delivered = _fulfilment(rng, day, customer.region.delivery_days)
            payment, channel = _pick(rng, PAYMENTS), _pick(rng, channels)
            orders.append(
                (order_id, customer.customer_id, day, status, channel, payment, _money(fee),
                 shipped, delivered)
            )  # fmt: skip
            items.extend(line.row() for line in lines)
            if delivered is not None:
                returns.extend(_returns(rng, lines, delivered, first_id=len(returns) + 1))
    return orders, items, returns


class _Line:
    """One order line while its order is generated."""

    def __init__(
        self,
        item_id: int,
        order_id: int,
        product: _Product,
        day: date,
        promo: bool,
        rng: random.Random,
    ) -> None:
        self.item_id, self.order_id, self.product = item_id, order_id, product
        self.quantity = _pick(rng, QUANTITY)
        self.cents = product.list_cents if day >= PRICE_RISE else product.old_cents
        self.percent_off = _discount(rng, product, day, promo)

    def net_cents(self, units: int) -> int:
        """units * unit_price * (1 - discount) in cents, rounded half up like DuckDB's round()."""
        return (units * self.cents * (100 - self.percent_off) + 50) // 100

    def row(self) -> Row:
        return (
            self.item_id,
            self.order_id,
            self.product.product_id,
            self.quantity,
            _money(self.cents),
            f"0.{self.percent_off:02d}",
        )


def _returns(rng: random.Random, lines: list[_Line], delivered: date, first_id: int) -> list[Row]:
    """Returns of some lines of one delivered order; none arrive after END."""
    rows: list[Row] = []
    for line in lines:
        if rng.random() >= CATEGORIES[line.product.category].return_rate:
            continue
        back = delivered + timedelta(days=rng.randint(3, 30))
        if back <= END:
            units = rng.randint(1, line.quantity)
            refund = _money(line.net_cents(units))
            reason = _pick(rng, RETURN_REASONS)
            rows.append((first_id + len(rows), line.item_id, back, units, reason, refund))
    return rows


def _discount(rng: random.Random, product: _Product, day: date, promo: bool) -> int:
    """Percent off a line: clearance before a product is dropped, the promo weekend, coupons."""
    if product.discontinued is not None and (product.discontinued - day).days <= 60:
        return 25
    if promo and rng.random() < 0.6:
        return 20
    roll = rng.random()
    if roll < 0.08:
        return 10
    if roll < 0.11:
        return 15
    return 0


def _fulfilment(
    rng: random.Random, day: date, delivery_days: tuple[int, int]
) -> tuple[str, date | None, date | None]:
    """Status and dates as they stand on END: the latest orders are still pending or shipped."""
    if rng.random() < CANCEL_RATE:
        return "cancelled", None, None
    shipped = day + timedelta(days=rng.randint(0, 2))
    delivered = shipped + timedelta(days=rng.randint(*delivery_days))
    if shipped > END:
        return "pending", None, None
    if delivered > END:
        return "shipped", shipped, None
    return "delivered", shipped, delivered

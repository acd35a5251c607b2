"""The demo warehouse's tables, view and the comment on every table and column.

The comments reach the model's prompt: they state units, currency, status values and how revenue
is computed, so keep them precise when the data changes.
"""

from __future__ import annotations

#: (column, type with constraints, comment) of one table.
Columns = tuple[tuple[str, str, str], ...]

#: Table name -> (table comment, columns), in load order.
TABLES: dict[str, tuple[str, Columns]] = {
    "regions": (
        "Sales regions of the shop. Every customer belongs to exactly one region.",
        (
            ("region_id", "SMALLINT PRIMARY KEY", "Region identifier."),
            ("region_name", "VARCHAR NOT NULL", "Region name, e.g. 'North America', 'Europe'."),
            ("region_code", "VARCHAR NOT NULL", "Short code: NA, EU, APAC, LATAM or MEA."),
        ),
    ),
    "customers": (
        "One row per registered customer account (people and businesses), including customers"
        " who never ordered.",
        (
            ("customer_id", "INTEGER PRIMARY KEY", "Customer identifier."),
            ("customer_name", "VARCHAR NOT NULL", "Full name of the account holder (fictional)."),
            ("email", "VARCHAR NOT NULL", "Contact e-mail address (fictional, example.com)."),
            ("segment", "VARCHAR NOT NULL", "'consumer' (private person) or 'business'."),
            ("city", "VARCHAR NOT NULL", "City of the default shipping address."),
            ("country", "VARCHAR NOT NULL", "Country of the default shipping address."),
            (
                "region_id",
                "SMALLINT NOT NULL REFERENCES regions (region_id)",
                "Region of the country; join to regions.region_id.",
            ),
            ("signup_date", "DATE NOT NULL", "Day the account was created."),
            (
                "acquisition_channel",
                "VARCHAR NOT NULL",
                "How the customer first found the shop: 'organic_search', 'paid_search',"
                " 'social', 'referral', 'email' or 'marketplace'.",
            ),
        ),
    ),
    "products": (
        "Product catalogue, including discontinued products.",
        (
            ("product_id", "INTEGER PRIMARY KEY", "Product identifier."),
            ("sku", "VARCHAR NOT NULL", "Stock keeping unit code, e.g. 'EL-001'."),
            ("product_name", "VARCHAR NOT NULL", "Product name as shown in the shop."),
            (
                "category",
                "VARCHAR NOT NULL",
                "Top-level category: 'Electronics', 'Home & Kitchen', 'Outdoor & Sports',"
                " 'Apparel', 'Beauty & Personal Care' or 'Books & Stationery'.",
            ),
            ("subcategory", "VARCHAR NOT NULL", "Finer grouping within the category."),
            (
                "list_price",
                "DECIMAL(10, 2) NOT NULL",
                "Current catalogue price of one unit in USD, before discounts. Prices rose on"
                " 2026-03-01, so older order lines may show a lower order_items.unit_price.",
            ),
            (
                "unit_cost",
                "DECIMAL(10, 2) NOT NULL",
                "What one unit costs the shop to buy in, in USD (for margin calculations).",
            ),
            ("launch_date", "DATE NOT NULL", "First day the product could be ordered."),
            (
                "discontinued_date",
                "DATE",
                "First day the product could no longer be ordered; NULL while still sold.",
            ),
        ),
    ),
    "orders": (
        "One row per order placed in the shop, from 2024-11-01 to 2026-10-31. Amounts are in"
        " USD. An order's revenue is the sum of its order_items lines; cancelled orders earn"
        " nothing.",
        (
            ("order_id", "INTEGER PRIMARY KEY", "Order identifier, increasing with order_date."),
            (
                "customer_id",
                "INTEGER NOT NULL REFERENCES customers (customer_id)",
                "Customer who placed the order; join to customers.customer_id.",
            ),
            ("order_date", "DATE NOT NULL", "Day the order was placed."),
            (
                "status",
                "VARCHAR NOT NULL",
                "'pending' (placed, not shipped yet), 'shipped' (on its way), 'delivered', or"
                " 'cancelled' (cancelled before shipping; no revenue). Returns are not a status:"
                " see the returns table.",
            ),
            (
                "channel",
                "VARCHAR NOT NULL",
                "Where the order was placed: 'web', 'mobile_app' or 'marketplace'.",
            ),
            (
                "payment_method",
                "VARCHAR NOT NULL",
                "'card', 'paypal', 'wallet' (Apple Pay / Google Pay) or 'gift_card'.",
            ),
            (
                "shipping_fee",
                "DECIMAL(8, 2) NOT NULL",
                "Shipping charged to the customer in USD; 0 when the order's items total at least"
                " 50 USD. Not part of product revenue.",
            ),
            ("shipped_date", "DATE", "Day the order left the warehouse; NULL if not shipped."),
            ("delivered_date", "DATE", "Day the order was delivered; NULL if not delivered."),
        ),
    ),
    "order_items": (
        "Order lines: one row per product in an order. Line revenue in USD is"
        " quantity * unit_price * (1 - discount); revenue counts lines of orders whose status is"
        " not 'cancelled'.",
        (
            ("order_item_id", "INTEGER PRIMARY KEY", "Order line identifier."),
            (
                "order_id",
                "INTEGER NOT NULL REFERENCES orders (order_id)",
                "Order of the line; join to orders.order_id.",
            ),
            (
                "product_id",
                "INTEGER NOT NULL REFERENCES products (product_id)",
                "Product ordered; join to products.product_id.",
            ),
            ("quantity", "INTEGER NOT NULL", "Number of units ordered (at least 1)."),
            (
                "unit_price",
                "DECIMAL(10, 2) NOT NULL",
                "Price of one unit in USD when ordered, before the line's discount.",
            ),
            (
                "discount",
                "DECIMAL(3, 2) NOT NULL",
                "Fraction of the line's amount taken off: 0.00 = none, 0.20 = 20% off.",
            ),
        ),
    ),
    "returns": (
        "Items customers sent back after delivery, with the refund paid. Returns are not"
        " subtracted in orders or order_items; subtract refund_amount for revenue net of"
        " returns.",
        (
            ("return_id", "INTEGER PRIMARY KEY", "Return identifier."),
            (
                "order_item_id",
                "INTEGER NOT NULL REFERENCES order_items (order_item_id)",
                "Order line returned; join to order_items.order_item_id.",
            ),
            ("return_date", "DATE NOT NULL", "Day the returned items arrived back."),
            ("quantity", "INTEGER NOT NULL", "Units returned (at most the line's quantity)."),
            (
                "reason",
                "VARCHAR NOT NULL",
                "'damaged', 'defective', 'wrong_size', 'not_as_described' or 'changed_mind'.",
            ),
            (
                "refund_amount",
                "DECIMAL(10, 2) NOT NULL",
                "Money refunded in USD: returned quantity * unit_price * (1 - discount) of the"
                " line, rounded to cents.",
            ),
        ),
    ),
}

VIEW_NAME = "sales"
#: Revenue computed once, the way the comments define it, so the model need not repeat it.
VIEW_SQL = f"""
CREATE VIEW {VIEW_NAME} AS
SELECT i.order_item_id, o.order_id, o.order_date, o.status, o.channel, o.customer_id,
       c.region_id, i.product_id, p.category, i.quantity,
       round(i.quantity * i.unit_price * (1 - i.discount), 2) AS net_revenue,
       i.quantity * p.unit_cost AS cost,
       round(i.quantity * i.unit_price * (1 - i.discount), 2) - i.quantity * p.unit_cost
           AS gross_profit
FROM order_items AS i
JOIN orders AS o USING (order_id)
JOIN customers AS c USING (customer_id)
JOIN products AS p USING (product_id)
WHERE o.status <> 'cancelled'
"""

VIEW_COMMENTS: tuple[tuple[str, str], ...] = (
    ("order_item_id", "Order line; see order_items."),
    ("order_id", "Order; see orders."),
    ("order_date", "Day the order was placed."),
    ("status", "Order status: 'pending', 'shipped' or 'delivered' (never 'cancelled' here)."),
    ("channel", "Where the order was placed: 'web', 'mobile_app' or 'marketplace'."),
    ("customer_id", "Customer who placed the order; see customers."),
    ("region_id", "Customer's region; join to regions.region_id."),
    ("product_id", "Product sold; see products."),
    ("category", "Product category (products.category)."),
    ("quantity", "Units sold on the line."),
    ("net_revenue", "Line revenue in USD after discount, before returns, rounded to cents."),
    ("cost", "Cost of the units in USD at the product's current unit_cost."),
    ("gross_profit", "net_revenue - cost, in USD."),
)
VIEW_COMMENT = (
    "Revenue-ready order lines: every line of a non-cancelled order with its date, customer"
    " region, product category, net revenue, cost and gross profit (USD). Use this for revenue."
)

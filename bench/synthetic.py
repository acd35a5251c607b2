"""Generated tables that look like a company warehouse: the haystack the real tables hide in.

Names, columns, descriptions and low-cardinality values are drawn from business vocabulary that
overlaps the real tables on purpose (`customers`, `users`, `sales`, `payments`, `reviews`...),
so retrieval has to tell one `customers` table from another.
"""

from __future__ import annotations

import random

from agent.catalog.snapshot import ColumnProfile, TableProfile, table_key
from connectors.base import ColumnInfo, TableInfo

SCHEMAS = (
    "finance", "marketing", "sales", "hr", "ops", "product", "support", "logistics", "risk",
    "growth", "billing", "crm", "inventory", "web", "mobile", "partners", "legal", "procurement",
    "payroll", "analytics", "staging", "ml_features", "security", "compliance", "catalog",
)  # fmt: skip

ENTITIES: dict[str, str] = {
    "customers": "customer accounts", "users": "registered users", "accounts": "billing accounts",
    "orders": "customer orders", "order_lines": "order line items", "invoices": "invoices issued",
    "payments": "payments received", "refunds": "refunds paid out", "subscriptions": "plans",
    "products": "sellable products", "skus": "stock keeping units", "suppliers": "suppliers",
    "shipments": "outbound shipments", "warehouses": "storage sites", "carriers": "carriers",
    "employees": "employees", "departments": "org departments", "salaries": "salary records",
    "campaigns": "marketing campaigns", "ad_clicks": "ad clicks", "leads": "sales leads",
    "opportunities": "sales opportunities", "tickets": "support tickets", "agents": "agents",
    "sessions": "web sessions", "page_views": "page views", "events": "tracked app events",
    "devices": "user devices", "reviews": "product reviews", "surveys": "survey answers",
    "contracts": "signed contracts", "vendors": "vendors", "budgets": "budget lines",
    "expenses": "expense claims", "transactions": "ledger transactions", "stores": "stores",
    "promotions": "promotions", "coupons": "coupon codes", "returns": "returned items",
    "inventory_levels": "stock levels", "forecasts": "demand forecasts", "alerts": "alerts",
    "experiments": "A/B experiments", "features": "feature flags", "releases": "releases",
    "incidents": "incidents", "audits": "audit findings", "claims": "insurance claims",
    "policies": "policies", "partners": "channel partners", "regions": "sales regions",
}  # fmt: skip

FORMS = (
    ("{e}", "One row per {d}."),
    ("dim_{e}", "Dimension table of {d}, one row per current version."),
    ("fct_{e}", "Fact table of {d} at event grain."),
    ("stg_{e}", "Staging copy of {d} loaded nightly from the source system."),
    ("{e}_daily", "Daily aggregate of {d}."),
    ("{e}_snapshot", "Month-end snapshot of {d}."),
    ("{e}_history", "Change history of {d} (slowly changing dimension type 2)."),
    ("{e}_v2", "Second version of {d}, after the 2025 migration."),
    ("int_{e}_enriched", "{d} joined with reference data."),
    ("agg_{e}_by_region", "{d} aggregated by region and month."),
)

COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("created_at", "TIMESTAMP", "When the row was created"),
    ("updated_at", "TIMESTAMP", "When the row last changed"),
    ("name", "VARCHAR", "Display name"),
    ("email", "VARCHAR", "Contact e-mail address"),
    ("amount", "DECIMAL(12,2)", "Amount in USD"),
    ("quantity", "INTEGER", "Number of units"),
    ("price", "DECIMAL(12,2)", "Unit price in USD"),
    ("country", "VARCHAR", "Country name"),
    ("city", "VARCHAR", "City name"),
    ("region", "VARCHAR", "Sales region"),
    ("status", "VARCHAR", "Lifecycle status"),
    ("channel", "VARCHAR", "Acquisition or sales channel"),
    ("category", "VARCHAR", "Category"),
    ("currency", "VARCHAR", "ISO currency code"),
    ("score", "DOUBLE", "Model or survey score"),
    ("is_active", "BOOLEAN", "Whether the record is active"),
    ("event_date", "DATE", "Day of the event"),
    ("owner_id", "BIGINT", "Employee who owns the record"),
    ("notes", "VARCHAR", "Free text notes"),
    ("rating", "INTEGER", "Rating from 1 to 5"),
    ("year", "INTEGER", "Calendar year"),
    ("month", "INTEGER", "Calendar month"),
    ("description", "VARCHAR", "Long description"),
    ("title", "VARCHAR", "Title"),
    ("phone", "VARCHAR", "Phone number"),
    ("state", "VARCHAR", "State or province"),
)

VALUES: dict[str, tuple[str, ...]] = {
    "status": ("active", "pending", "closed", "cancelled", "churned", "open", "resolved"),
    "channel": ("web", "mobile", "partner", "retail", "email", "paid_search", "organic"),
    "category": ("Electronics", "Apparel", "Home", "Books", "Sports", "Beauty", "Toys"),
    "currency": ("USD", "EUR", "GBP", "JPY", "CAD"),
    "region": ("North America", "Europe", "APAC", "LATAM", "MEA"),
    "country": ("United States", "Germany", "France", "Japan", "Brazil", "India", "Canada"),
    "state": ("California", "Texas", "New York", "Ontario", "Bavaria", "Florida"),
}


def generate(count: int, seed: int = 5) -> tuple[list[TableInfo], dict[str, TableProfile]]:
    """`count` tables named `warehouse.SCHEMA.TABLE`, with profiles for their text columns."""
    rng = random.Random(seed)
    combos = [(s, e, f) for s in SCHEMAS for e in ENTITIES for f in FORMS]
    rng.shuffle(combos)
    tables, profiles = [], {}
    for schema, entity, (form, text) in combos[:count]:
        described = ENTITIES[entity]
        singular = entity[:-1] if entity.endswith("s") else entity
        columns = [ColumnInfo(f"{singular}_id", "BIGINT", f"Identifier of the {singular}")]
        partner = rng.choice(list(ENTITIES))
        columns.append(
            ColumnInfo(f"{partner.rstrip('s')}_id", "BIGINT", f"Reference to {ENTITIES[partner]}")
        )
        for name, type_, desc in rng.sample(COLUMNS, rng.randint(4, 12)):
            columns.append(ColumnInfo(name, type_, f"{desc} of the {singular}"))
        table = TableInfo(
            name=f"warehouse.{schema}.{form.format(e=entity)}",
            columns=tuple(columns),
            description=text.format(d=described, e=entity).capitalize() + f" Owned by {schema}.",
            row_count=rng.randint(10, 10_000_000),
        )
        tables.append(table)
        profiles[table_key(table.name)] = TableProfile(
            table.row_count,
            {
                c.name: ColumnProfile(len(VALUES[c.name]), VALUES[c.name], complete=True)
                for c in columns
                if c.name in VALUES
            },
        )
    return tables, profiles

"""The shop the demo warehouse describes: its calendar, regions, customers' names, product
categories and catalogue, and the mixes and rates its orders are drawn from.

`connectors.demo.data` generates the rows from these; changing a value here changes the demo's
answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

START = date(2024, 11, 1)
END = date(2026, 10, 31)
#: Prices of many products rose on this day; earlier order lines carry the older price.
PRICE_RISE = date(2026, 3, 1)


@dataclass(frozen=True)
class Region:
    region_id: int
    name: str
    code: str
    #: Share of customers living in the region.
    share: float
    #: Shipping fee below the free-shipping threshold.
    fee_cents: int
    #: Fewest and most days from shipping to delivery.
    delivery_days: tuple[int, int]
    #: Country -> cities.
    countries: dict[str, tuple[str, ...]]


REGIONS = (
    Region(1, "North America", "NA", 0.40, 499, (2, 5), {
        "United States": ("New York", "Chicago", "Austin", "Seattle", "Denver", "Atlanta"),
        "Canada": ("Toronto", "Vancouver", "Montreal"),
    }),
    Region(2, "Europe", "EU", 0.32, 599, (2, 6), {
        "United Kingdom": ("London", "Manchester", "Edinburgh"),
        "Germany": ("Berlin", "Munich", "Hamburg"),
        "France": ("Paris", "Lyon", "Toulouse"),
        "Spain": ("Madrid", "Barcelona", "Valencia"),
        "Italy": ("Milan", "Rome", "Turin"),
        "Netherlands": ("Amsterdam", "Rotterdam", "Utrecht"),
        "Sweden": ("Stockholm", "Gothenburg"),
        "Poland": ("Warsaw", "Krakow"),
    }),
    Region(3, "Asia Pacific", "APAC", 0.15, 999, (3, 8), {
        "Japan": ("Tokyo", "Osaka"),
        "Australia": ("Sydney", "Melbourne", "Brisbane"),
        "Singapore": ("Singapore",),
        "India": ("Bengaluru", "Mumbai", "Delhi"),
        "South Korea": ("Seoul", "Busan"),
    }),
    Region(4, "Latin America", "LATAM", 0.08, 999, (4, 10), {
        "Mexico": ("Mexico City", "Guadalajara", "Monterrey"),
        "Brazil": ("Sao Paulo", "Rio de Janeiro"),
        "Argentina": ("Buenos Aires", "Cordoba"),
        "Chile": ("Santiago",),
        "Colombia": ("Bogota", "Medellin"),
    }),
    Region(5, "Middle East & Africa", "MEA", 0.05, 999, (4, 10), {
        "United Arab Emirates": ("Dubai", "Abu Dhabi"),
        "South Africa": ("Cape Town", "Johannesburg"),
        "Nigeria": ("Lagos",),
        "Kenya": ("Nairobi",),
    }),
)  # fmt: skip

FIRST_NAMES = (
    "Emma", "Liam", "Olivia", "Noah", "Ava", "Lucas", "Sofia", "Mateo", "Mia", "Leon", "Hannah",
    "Elias", "Chloe", "Hugo", "Lea", "Oscar", "Julia", "Felix", "Alice", "Arjun", "Priya",
    "Yuki", "Haruto", "Min-jun", "Ji-woo", "Wei", "Mei", "Diego", "Camila", "Valentina",
    "Santiago", "Amara", "Chidi", "Zanele", "Omar", "Layla", "Ethan", "Grace", "Jack", "Isla",
)  # fmt: skip
LAST_NAMES = (
    "Smith", "Johnson", "Brown", "Garcia", "Martinez", "Muller", "Schmidt", "Dubois", "Martin",
    "Rossi", "Bianchi", "de Vries", "Jansen", "Andersson", "Kowalski", "Nowak", "Tanaka", "Sato",
    "Kim", "Park", "Chen", "Wang", "Sharma", "Patel", "Silva", "Santos", "Gonzalez", "Lopez",
    "Okafor", "Mensah", "Naidoo", "Haddad", "Wilson", "Taylor", "Walker", "Clarke", "Novak",
    "Fischer", "Moreau", "Costa",
)  # fmt: skip


@dataclass(frozen=True)
class Category:
    sku_prefix: str
    #: What a unit costs the shop, as a share of its list price.
    cost_share: float
    #: Share of delivered lines that come back.
    return_rate: float
    #: Demand by month, January first (1.0 = an average month).
    season: tuple[float, ...]


#: Seasonality: January first. Electronics peak at the holidays, outdoor gear in summer.
CATEGORIES = {
    "Electronics": Category(
        "EL", 0.72, 0.06, (0.8, 0.7, 0.8, 0.8, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0, 1.5, 1.8)),
    "Home & Kitchen": Category(
        "HK", 0.58, 0.04, (0.9, 0.9, 1.0, 1.0, 1.0, 0.9, 0.9, 0.9, 1.0, 1.1, 1.3, 1.5)),
    "Outdoor & Sports": Category(
        "OS", 0.60, 0.05, (0.6, 0.6, 0.9, 1.2, 1.5, 1.7, 1.7, 1.4, 1.0, 0.8, 0.8, 0.9)),
    "Apparel": Category(
        "AP", 0.45, 0.14, (1.1, 0.9, 1.0, 1.0, 1.0, 1.0, 0.9, 1.0, 1.1, 1.1, 1.3, 1.4)),
    "Beauty & Personal Care": Category(
        "BP", 0.40, 0.02, (1.0, 1.1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.2, 1.5)),
    "Books & Stationery": Category(
        "BS", 0.55, 0.02, (1.2, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 1.3, 1.4, 1.0, 1.1, 1.4)),
}  # fmt: skip

#: (name, category, subcategory, list price in USD)
PRODUCTS: tuple[tuple[str, str, str, str], ...] = (
    ("Wireless Earbuds Pro", "Electronics", "Audio", "129.99"),
    ("Noise-Cancelling Headphones", "Electronics", "Audio", "249.00"),
    ("Portable Bluetooth Speaker", "Electronics", "Audio", "59.99"),
    ("Smart Speaker Mini", "Electronics", "Audio", "39.99"),
    ("Smartwatch Series 4", "Electronics", "Wearables", "199.00"),
    ("Fitness Tracker Band", "Electronics", "Wearables", "49.99"),
    ("65W USB-C Charger", "Electronics", "Accessories", "34.99"),
    ("20000mAh Power Bank", "Electronics", "Accessories", "44.99"),
    ("USB-C Cable 2 m (2-pack)", "Electronics", "Accessories", "14.99"),
    ("Mechanical Keyboard", "Electronics", "Computer Peripherals", "89.99"),
    ("Wireless Mouse", "Electronics", "Computer Peripherals", "24.99"),
    ("4K Webcam", "Electronics", "Computer Peripherals", "79.99"),
    ("27-inch 4K Monitor", "Electronics", "Computer Peripherals", "329.00"),
    ("Portable SSD 1 TB", "Electronics", "Storage", "99.99"),
    ("microSD Card 256 GB", "Electronics", "Storage", "29.99"),
    ("E-Reader Paperwhite", "Electronics", "Tablets & E-Readers", "139.99"),
    ("10-inch Tablet", "Electronics", "Tablets & E-Readers", "229.00"),
    ("Action Camera 4K", "Electronics", "Cameras", "179.00"),
    ("Chef's Knife 20 cm", "Home & Kitchen", "Cookware", "49.99"),
    ("Cast Iron Skillet 26 cm", "Home & Kitchen", "Cookware", "39.99"),
    ("Non-Stick Pan Set (3 pcs)", "Home & Kitchen", "Cookware", "69.99"),
    ("Stainless Steel Saucepan", "Home & Kitchen", "Cookware", "34.99"),
    ("Espresso Machine", "Home & Kitchen", "Small Appliances", "349.00"),
    ("Electric Kettle", "Home & Kitchen", "Small Appliances", "39.99"),
    ("High-Speed Blender", "Home & Kitchen", "Small Appliances", "119.00"),
    ("Air Fryer 5 L", "Home & Kitchen", "Small Appliances", "99.99"),
    ("Robot Vacuum", "Home & Kitchen", "Small Appliances", "279.00"),
    ("Ceramic Dinner Set (12 pcs)", "Home & Kitchen", "Tableware", "79.99"),
    ("Glass Food Containers (5-pack)", "Home & Kitchen", "Storage", "29.99"),
    ("Bamboo Cutting Board", "Home & Kitchen", "Kitchen Tools", "19.99"),
    ("Digital Kitchen Scale", "Home & Kitchen", "Kitchen Tools", "17.99"),
    ("Cotton Bath Towels (4-pack)", "Home & Kitchen", "Bed & Bath", "44.99"),
    ("Linen Duvet Cover", "Home & Kitchen", "Bed & Bath", "89.99"),
    ("Memory Foam Pillow", "Home & Kitchen", "Bed & Bath", "39.99"),
    ("Scented Candle Set", "Home & Kitchen", "Decor", "24.99"),
    ("LED Desk Lamp", "Home & Kitchen", "Decor", "34.99"),
    ("2-Person Camping Tent", "Outdoor & Sports", "Camping", "159.00"),
    ("Down Sleeping Bag", "Outdoor & Sports", "Camping", "129.00"),
    ("Camping Stove", "Outdoor & Sports", "Camping", "54.99"),
    ("Headlamp 400 lm", "Outdoor & Sports", "Camping", "24.99"),
    ("Insulated Water Bottle 1 L", "Outdoor & Sports", "Hydration", "29.99"),
    ("Hydration Backpack", "Outdoor & Sports", "Hydration", "64.99"),
    ("Trail Running Shoes", "Outdoor & Sports", "Running", "119.00"),
    ("Running Belt", "Outdoor & Sports", "Running", "19.99"),
    ("Yoga Mat", "Outdoor & Sports", "Fitness", "34.99"),
    ("Adjustable Dumbbells (pair)", "Outdoor & Sports", "Fitness", "199.00"),
    ("Resistance Bands Set", "Outdoor & Sports", "Fitness", "24.99"),
    ("Foam Roller", "Outdoor & Sports", "Fitness", "22.99"),
    ("Bike Helmet", "Outdoor & Sports", "Cycling", "69.99"),
    ("Bike Light Set", "Outdoor & Sports", "Cycling", "29.99"),
    ("Trekking Poles (pair)", "Outdoor & Sports", "Hiking", "49.99"),
    ("Hiking Daypack 25 L", "Outdoor & Sports", "Hiking", "79.99"),
    ("Snorkel Set", "Outdoor & Sports", "Water Sports", "39.99"),
    ("Merino Wool T-Shirt", "Apparel", "Tops", "59.99"),
    ("Organic Cotton T-Shirt", "Apparel", "Tops", "24.99"),
    ("Oxford Shirt", "Apparel", "Tops", "49.99"),
    ("Hooded Sweatshirt", "Apparel", "Tops", "54.99"),
    ("Slim Fit Jeans", "Apparel", "Bottoms", "69.99"),
    ("Chino Trousers", "Apparel", "Bottoms", "59.99"),
    ("Running Shorts", "Apparel", "Bottoms", "29.99"),
    ("Rain Jacket", "Apparel", "Outerwear", "129.00"),
    ("Puffer Jacket", "Apparel", "Outerwear", "179.00"),
    ("Fleece Jacket", "Apparel", "Outerwear", "79.99"),
    ("Leather Sneakers", "Apparel", "Footwear", "109.00"),
    ("Wool Socks (3-pack)", "Apparel", "Accessories", "19.99"),
    ("Knit Beanie", "Apparel", "Accessories", "19.99"),
    ("Leather Belt", "Apparel", "Accessories", "34.99"),
    ("Canvas Tote Bag", "Apparel", "Accessories", "24.99"),
    ("Sunglasses", "Apparel", "Accessories", "89.99"),
    ("Cashmere Scarf", "Apparel", "Accessories", "99.00"),
    ("Daily Moisturizer 50 ml", "Beauty & Personal Care", "Skincare", "24.99"),
    ("Vitamin C Serum 30 ml", "Beauty & Personal Care", "Skincare", "32.99"),
    ("Sunscreen SPF 50", "Beauty & Personal Care", "Skincare", "16.99"),
    ("Gentle Face Cleanser", "Beauty & Personal Care", "Skincare", "12.99"),
    ("Night Cream 50 ml", "Beauty & Personal Care", "Skincare", "36.99"),
    ("Argan Oil Shampoo", "Beauty & Personal Care", "Hair Care", "14.99"),
    ("Repair Conditioner", "Beauty & Personal Care", "Hair Care", "14.99"),
    ("Ionic Hair Dryer", "Beauty & Personal Care", "Hair Care", "79.99"),
    ("Electric Toothbrush", "Beauty & Personal Care", "Oral Care", "69.99"),
    ("Toothbrush Heads (4-pack)", "Beauty & Personal Care", "Oral Care", "19.99"),
    ("Electric Shaver", "Beauty & Personal Care", "Shaving", "99.99"),
    ("Eau de Parfum 50 ml", "Beauty & Personal Care", "Fragrance", "64.99"),
    ("Lip Balm Set", "Beauty & Personal Care", "Makeup", "9.99"),
    ("Mascara", "Beauty & Personal Care", "Makeup", "19.99"),
    ("Hand Cream Trio", "Beauty & Personal Care", "Body Care", "21.99"),
    ("The Data Warehouse Handbook", "Books & Stationery", "Books", "44.99"),
    ("SQL for Analysts", "Books & Stationery", "Books", "34.99"),
    ("The Quiet Forest (novel)", "Books & Stationery", "Books", "16.99"),
    ("World Cookbook", "Books & Stationery", "Books", "29.99"),
    ("Trail Guide: Alps", "Books & Stationery", "Books", "24.99"),
    ("Children's Atlas", "Books & Stationery", "Books", "19.99"),
    ("Dotted Notebook A5", "Books & Stationery", "Notebooks", "14.99"),
    ("Hardcover Planner 2026", "Books & Stationery", "Notebooks", "22.99"),
    ("Sketchbook A4", "Books & Stationery", "Notebooks", "12.99"),
    ("Fountain Pen", "Books & Stationery", "Writing", "39.99"),
    ("Gel Pens (10-pack)", "Books & Stationery", "Writing", "11.99"),
    ("Watercolour Paint Set", "Books & Stationery", "Art Supplies", "27.99"),
    ("Desk Organizer", "Books & Stationery", "Office", "26.99"),
    ("Jigsaw Puzzle 1000 pcs", "Books & Stationery", "Games", "21.99"),
    ("Strategy Board Game", "Books & Stationery", "Games", "49.99"),
)

SEGMENTS = (("consumer", 85), ("business", 15))
ACQUISITION = (
    ("organic_search", 30), ("paid_search", 22), ("social", 18), ("referral", 12),
    ("email", 8), ("marketplace", 10),
)  # fmt: skip
PAYMENTS = (("card", 62), ("paypal", 22), ("wallet", 11), ("gift_card", 5))
RETURN_REASONS = (
    ("damaged", 15), ("defective", 20), ("wrong_size", 25), ("not_as_described", 15),
    ("changed_mind", 25),
)  # fmt: skip
ITEMS_PER_ORDER = ((1, 30), (2, 28), (3, 20), (4, 12), (5, 6), (6, 4))
QUANTITY = ((1, 70), (2, 18), (3, 7), (4, 3), (5, 2))
#: Black Friday to Cyber Monday: three times the orders, and many lines 20% off.
PROMO_DAYS = frozenset(
    first + timedelta(days=offset)
    for first in (date(2024, 11, 29), date(2025, 11, 28))
    for offset in range(4)
)
N_CUSTOMERS = 2000
FIRST_SIGNUP = date(2022, 1, 1)
#: Orders on an average day, before growth, seasonality and weekday effects.
ORDERS_PER_DAY = 25.0
WEEKDAY = (1.05, 1.0, 1.0, 1.0, 0.95, 0.9, 1.1)  # Monday first
FREE_SHIPPING_CENTS = 5000
CANCEL_RATE = 0.035

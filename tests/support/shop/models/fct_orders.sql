select order_id, customer_id, ordered_at, status, amount
from {{ ref('raw_orders') }}

select customer_id, name as customer_name, region, signup_date
from {{ ref('raw_customers') }}

-- staging: the orders as dbt reads them, amounts exact
select order_id, customer, quarter, status, cast(amount as decimal(12, 2)) as amount
from {{ ref('orders') }}

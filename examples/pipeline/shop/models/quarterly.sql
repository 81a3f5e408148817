-- the aggregate: revenue per quarter, refunds included
select quarter, sum(amount) as total, count(*) as orders
from {{ ref('stg_orders') }}
group by quarter

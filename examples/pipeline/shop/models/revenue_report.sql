-- the quarterly revenue report that may, or may not, be published
select quarter, total from {{ ref('quarterly') }} where quarter = '2026-Q3'

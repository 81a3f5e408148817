// name: closures-as-of
// question: As of a past time, which closures about a subject stood, and which had already been superseded?
// params: subject (a subject), as_of (an ISO 8601 time, e.g. 2026-07-16T00:00:00.000Z)
// example: gaf query closures-as-of --param subject=rent:lease-17/2026-07 --param as_of=2026-07-16T00:00:00.000Z
MATCH (c:Closure {subject: $subject})
WHERE c.closed_at <= $as_of
OPTIONAL MATCH (n:Closure)-[:SUPERSEDES]->(c)
WITH c, collect(CASE WHEN n.closed_at <= $as_of THEN n.id ELSE NULL END) AS later
OPTIONAL MATCH (v:Verdict)-[:DECIDES]->(c)
RETURN c.id AS closure, c.closed_at AS closed_at, v.label AS verdict, size(later) = 0 AS standing
ORDER BY closed_at, closure

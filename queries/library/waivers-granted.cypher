// name: waivers-granted
// question: Which decisions were let past which policies, on whose authority, and why?
// params: (none)
// example: gaf query waivers-granted
MATCH (w:Waiver)-[:GRANTED_BY]->(a:Agent)
MATCH (w)-[:WAIVED_FOR]->(c:Closure)
MATCH (w)-[:WAIVES]->(pol)
RETURN w.id AS waiver, a.key AS authority, c.id AS closure, c.subject AS subject, pol.kind AS policy_kind, pol.id AS policy,
       w.reason AS reason, w.granted_at AS granted_at
ORDER BY granted_at, waiver

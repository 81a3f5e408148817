// name: decisions-by-reviewer
// question: Which acceptance decisions did this reviewer make, when, why, and how many facts did each admit?
// params: reviewer (an agent key)
// example: gaf query decisions-by-reviewer --param reviewer=registry-clerk
MATCH (d:Decision)-[:DECIDED_BY]->(a:Agent {key: $reviewer})
RETURN d.id AS decision, d.decided_at AS decided_at, d.reason AS reason, size(d.accepted) AS accepted
ORDER BY decided_at, decision

// name: gaf-diff
// question: What changed between two closures' GAFs: which accepted facts were added and which removed?
// params: old (a closure id), new (a closure id)
// example: gaf query gaf-diff --param old=closure:0609… --param new=closure:aca0…
MATCH (:Closure {id: $old})-[:CLOSES]->(g1:GAF)
MATCH (:Closure {id: $new})-[:CLOSES]->(g2:GAF)
MATCH (g2)-[:CONTAINS]->(f:AcceptedFact)-[:STATES]->(p:Proposition)
WHERE NOT EXISTS { MATCH (g1)-[:CONTAINS]->(f) }
RETURN 'added' AS change, p.predicate AS predicate, p.subject AS subject, f.id AS fact
UNION
MATCH (:Closure {id: $old})-[:CLOSES]->(g1:GAF)
MATCH (:Closure {id: $new})-[:CLOSES]->(g2:GAF)
MATCH (g1)-[:CONTAINS]->(f:AcceptedFact)-[:STATES]->(p:Proposition)
WHERE NOT EXISTS { MATCH (g2)-[:CONTAINS]->(f) }
RETURN 'removed' AS change, p.predicate AS predicate, p.subject AS subject, f.id AS fact

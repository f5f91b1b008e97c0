-- Every review row (`scorelake review`, the viewer's review queue, `review --import`), oldest first
-- per key: not run-scoped, a review belongs to its run's scenario whichever ingest stored it.
SELECT * FROM {{ reviews }}

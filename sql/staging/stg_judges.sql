-- Judges defined by `scorelake rejudge`: a name bound to the settings its judgements were made with.
SELECT name, spec_json, created_at
FROM {{ judges }}
QUALIFY row_number() OVER (PARTITION BY name ORDER BY created_at) = 1

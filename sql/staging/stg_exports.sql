-- The scenarios whose verdicts `scorelake export otlp` sent, per endpoint and policy (each once).
SELECT * FROM {{ exports }}

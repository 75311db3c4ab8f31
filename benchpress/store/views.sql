-- DuckDB views over the registry's Parquet tables. {dir} is the registry folder.
CREATE OR REPLACE VIEW models AS SELECT * FROM read_parquet('{dir}/models.parquet');
CREATE OR REPLACE VIEW benchmarks AS SELECT * FROM read_parquet('{dir}/benchmarks.parquet');
CREATE OR REPLACE VIEW scores AS SELECT * FROM read_parquet('{dir}/scores.parquet');
CREATE OR REPLACE VIEW cells AS SELECT * FROM read_parquet('{dir}/cells.parquet');
CREATE OR REPLACE VIEW aliases AS SELECT * FROM read_parquet('{dir}/aliases.parquet');
CREATE OR REPLACE VIEW sources AS SELECT * FROM read_parquet('{dir}/sources.parquet');
CREATE OR REPLACE VIEW quarantine AS SELECT * FROM read_parquet('{dir}/quarantine.parquet');
-- every observation that lost to the resolved cell's winner
CREATE OR REPLACE VIEW conflicts AS
    SELECT s.model_id, s.benchmark_id, c.score AS resolved_score, c.source_id AS resolved_source,
           s.score AS other_score, s.source_id AS other_source, s.source_type AS other_source_type,
           s.reference_url AS other_reference_url, s.score - c.score AS difference
    FROM scores s JOIN cells c USING (model_id, benchmark_id)
    WHERE abs(s.score - c.score) > 1e-9;

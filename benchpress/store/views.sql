-- DuckDB views over the registry's tables, defined by the package (never read from a data
-- folder). `store.sql.connect` registers the verified tables models, benchmarks, scores,
-- cells, aliases, sources, quarantine and matrix (wide), plus _scores_in_file_order (scores
-- with their file_row_number), in a sealed connection, then runs this file.
-- latest_scores: the observations of each source's newest version (every row of an
-- unversioned source), and the last values of a benchmark's old method where the newest
-- version has it only as a method version `<id>@<version>` (`store.resolve`); older versions
-- stay in `scores` and in `score_history`.
CREATE OR REPLACE VIEW latest_scores AS
    SELECT * EXCLUDE (_newest, _in_newest_id, _in_newest_base, _newest_id) FROM (
        SELECT *,
            bool_or(source_version = _newest) OVER (PARTITION BY source_id, benchmark_id)
                AS _in_newest_id,
            bool_or(source_version = _newest)
                OVER (PARTITION BY source_id, split_part(benchmark_id, '@', 1)) AS _in_newest_base,
            max(source_version) OVER (PARTITION BY source_id, benchmark_id) AS _newest_id
        FROM (SELECT *, max(source_version) OVER (PARTITION BY source_id) AS _newest
              FROM _scores_in_file_order)
    )
    WHERE _newest IS NULL OR source_version = _newest
       OR (NOT coalesce(_in_newest_id, false) AND coalesce(_in_newest_base, false)
           AND source_version = _newest_id);
-- score_history: every version's value of every (model, benchmark, source), oldest version
-- first; `revised` marks a value that differs from the same source's previous version.
CREATE OR REPLACE VIEW score_history AS
    SELECT model_id, benchmark_id, source_id, source_version AS version, score, previous_score,
           previous_score IS NOT NULL AND abs(score - previous_score) > 1e-9 AS revised,
           reported_setting, reference_url
    FROM (
        SELECT *, lag(score) OVER (PARTITION BY model_id, benchmark_id, source_id
                                   ORDER BY source_version) AS previous_score
        FROM (
            SELECT *, row_number() OVER (PARTITION BY model_id, benchmark_id, source_id, source_version
                                         ORDER BY coalesce(audit_status, '') = 'dropped', file_row_number) AS _rank
            FROM _scores_in_file_order
        ) WHERE _rank = 1
    );
-- conflicts: every observation of a source's newest version that lost to the resolved
-- cell's winner (a value its publisher revised is history, not a conflict; a value
-- superseded by a newer citation or retracted is kept in scores for audit, not a conflict),
-- with who measured each side (`measured_by`, see store/provenance.py); the two values and
-- their difference come right after the ids, so a table at 80 columns shows both
CREATE OR REPLACE VIEW conflicts AS
    SELECT s.model_id, s.benchmark_id, c.score AS resolved_score, s.score AS other_score,
           s.score - c.score AS difference, c.source_id AS resolved_source,
           s.source_id AS other_source, s.source_type AS other_source_type,
           s.reference_url AS other_reference_url,
           c.measured_by AS resolved_measured_by, s.measured_by AS other_measured_by
    FROM latest_scores s JOIN cells c USING (model_id, benchmark_id)
    WHERE abs(s.score - c.score) > 1e-9
      AND coalesce(s.audit_status, '') NOT IN ('superseded', 'retracted');
-- source_values: one value per (model, benchmark, source) of the source's newest version, chosen the way `cells` chooses
-- within a source (an observation the publisher's audit dropped last, then the earlier row
-- of the source, which for leaderboards is the latest run or release), with how many
-- observations that source has for the cell.
CREATE OR REPLACE VIEW source_values AS
    SELECT model_id, benchmark_id, source_id, score, source_type, reference_url,
           reported_setting, derived, observed_at, row, n_observations
    FROM (
        SELECT *,
               row_number() OVER (PARTITION BY model_id, benchmark_id, source_id
                                  ORDER BY coalesce(audit_status, '') = 'dropped', file_row_number) AS _rank,
               count(*) OVER (PARTITION BY model_id, benchmark_id, source_id) AS n_observations
        FROM latest_scores
    )
    WHERE _rank = 1;
-- source_kinds: a source is a leaderboard when most of its observations are leaderboard runs
-- (Epoch AI, LiveBench, Aider); the matrices of vendor-cited numbers are not.
CREATE OR REPLACE VIEW source_kinds AS
    SELECT source_id, avg(CASE WHEN source_type = 'leaderboard' THEN 1 ELSE 0 END) >= 0.5 AS is_leaderboard,
           count(*) AS n_scores
    FROM latest_scores GROUP BY source_id;
-- source_comparison: each leaderboard's value beside each matrix's value for the same model
-- and benchmark (GPQA Diamond from Epoch AI against the vendor's number, say), on the
-- benchmark's own scale (leaderboard fractions are already percent). difference is
-- leaderboard minus matrix. Models meet here when their ids agree, directly or through the
-- alias table (`benchpress aliases suggest --source epoch`, then `aliases accept`).
CREATE OR REPLACE VIEW source_comparison AS
    SELECT l.model_id, l.benchmark_id, b.scale,
           l.source_id AS leaderboard_source, l.score AS leaderboard_score,
           l.reported_setting AS leaderboard_setting, l.derived AS leaderboard_derived,
           l.reference_url AS leaderboard_reference_url,
           r.source_id AS matrix_source, r.score AS matrix_score, r.source_type AS matrix_source_type,
           r.reported_setting AS matrix_setting, r.reference_url AS matrix_reference_url,
           round(l.score - r.score, 4) AS difference, round(abs(l.score - r.score), 4) AS abs_difference
    FROM source_values l
    JOIN source_kinds kl ON kl.source_id = l.source_id AND kl.is_leaderboard
    JOIN source_values r ON r.model_id = l.model_id AND r.benchmark_id = l.benchmark_id
    JOIN source_kinds kr ON kr.source_id = r.source_id AND NOT kr.is_leaderboard
    LEFT JOIN benchmarks b ON b.benchmark_id = l.benchmark_id;
-- source_disagreements: the comparisons that differ by more than 5 points (percent and index
-- scales), largest first.
CREATE OR REPLACE VIEW source_disagreements AS
    SELECT * FROM source_comparison
    WHERE abs_difference > 5 AND scale IN ('percent', 'index')
    ORDER BY abs_difference DESC, model_id, benchmark_id;
-- entries: the rows of `models` that are not bare models (entry_kind agent: a SWE-bench
-- scaffold running a model, submission: a tau2-bench run), each with the model it runs
-- (base_model_id) and that model's name where the registry has it. An agent or submission
-- keeps its own cells, never merged into its model's: this view is the link.
CREATE OR REPLACE VIEW entries AS
    SELECT e.model_id, e.name, e.entry_kind, e.base_model_id, b.name AS base_model_name,
           b.model_id IS NOT NULL AS base_in_registry, e.provider, e.source_id
    FROM models e LEFT JOIN models b ON b.model_id = e.base_model_id
    WHERE e.entry_kind <> 'model';
-- entry_scores: each agent's or submission's cells beside the cell of the model it runs on
-- the same benchmark (null where that model has none): what a scaffold, an effort or a user
-- simulator makes of the bare model.
CREATE OR REPLACE VIEW entry_scores AS
    SELECT e.model_id AS entry_id, e.entry_kind, e.base_model_id, c.benchmark_id,
           c.score AS entry_score, m.score AS base_score, c.score - m.score AS difference,
           c.source_id AS entry_source, m.source_id AS base_source
    FROM models e JOIN cells c ON c.model_id = e.model_id
    LEFT JOIN cells m ON m.model_id = e.base_model_id AND m.benchmark_id = c.benchmark_id
    WHERE e.entry_kind <> 'model';

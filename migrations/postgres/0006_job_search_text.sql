-- The jobs list's folded search text (SQLite's 0018_job_search_text).
ALTER TABLE "jobs" ADD COLUMN "search_text" text;

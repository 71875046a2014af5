-- The jobs whose search text is still to be filled (SQLite's 0019_job_search_text_missing).
CREATE INDEX "jobs_search_text_missing_idx" ON "jobs" ("id") WHERE search_text IS NULL;

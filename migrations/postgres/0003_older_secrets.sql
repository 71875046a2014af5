-- Secrets rotated out before the previous one and still inside their own 24 hours (SQLite's 0015_older_secrets).
ALTER TABLE "webhook_endpoints" ADD COLUMN "older_secrets" text;

-- The company's time zone (SQLite's 0016_account_time_zone).
ALTER TABLE "accounts" ADD COLUMN "time_zone" text DEFAULT 'UTC' NOT NULL;

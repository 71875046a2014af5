-- PostgreSQL only: the API keys' rate-limit buckets shared by every instance (SharedRateLimiter).
-- UNLOGGED: no WAL for a row written on every request; emptied after a crash, when every key starts full.
CREATE UNLOGGED TABLE "rate_limit_buckets" (
	"kind" text NOT NULL,
	"id" text NOT NULL,
	"tokens" double precision NOT NULL,
	"at" bigint NOT NULL,
	"allowed" bigint NOT NULL,
	PRIMARY KEY("kind", "id")
);
--> statement-breakpoint
CREATE INDEX "rate_limit_buckets_at_idx" ON "rate_limit_buckets" ("at");

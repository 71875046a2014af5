-- PostgreSQL only: each instance's heartbeat (LeaseHolders). An instance on another machine whose
-- heartbeat stopped has its webhook leases taken back by the others, not waited out.
-- UNLOGGED: no WAL for a row rewritten every few seconds; emptied after a crash (instances then
-- beat again within seconds, and leases of owners without a row are waited out as before).
CREATE UNLOGGED TABLE "lease_holders" (
	"owner" text PRIMARY KEY NOT NULL,
	"seen_at" bigint NOT NULL
);

CREATE TABLE `webhook_event_payloads` (
	`event_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`event_id` text,
	`event_type` text NOT NULL,
	`data` text,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`first_attempt_at` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- Hand-added: each job event's data moves to webhook_event_payloads, once per event (it was
-- the same on every endpoint's delivery); deliveries keep data only for pings.
INSERT INTO `webhook_event_payloads`("event_id", "account_id", "data", "created_at") SELECT "event_id", min("account_id"), min("data"), min("created_at") FROM `webhook_deliveries` WHERE "event_id" IS NOT NULL GROUP BY "event_id";--> statement-breakpoint
INSERT INTO `__new_webhook_deliveries`("id", "account_id", "endpoint_id", "event_id", "event_type", "data", "status", "attempts", "next_attempt_at", "first_attempt_at", "last_error", "created_at", "updated_at") SELECT "id", "account_id", "endpoint_id", "event_id", "event_type", CASE WHEN "event_id" IS NULL THEN "data" END, "status", "attempts", "next_attempt_at", "first_attempt_at", "last_error", "created_at", "updated_at" FROM `webhook_deliveries`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_webhook_deliveries` RENAME TO `webhook_deliveries`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`next_attempt_at`);
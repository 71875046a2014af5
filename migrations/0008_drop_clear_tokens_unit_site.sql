DROP TABLE `webhook_event_payloads`;--> statement-breakpoint
DROP INDEX `jobs_tracking_token_uq`;--> statement-breakpoint
DROP INDEX `jobs_driver_token_idx`;--> statement-breakpoint
ALTER TABLE `jobs` DROP COLUMN `tracking_token`;--> statement-breakpoint
ALTER TABLE `jobs` DROP COLUMN `driver_token`;--> statement-breakpoint
ALTER TABLE `units` DROP COLUMN `site_id`;
CREATE TABLE `inbound_texts` (
	`message_sid` text PRIMARY KEY NOT NULL,
	`account_id` text,
	`job_id` text,
	`reply` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
DROP INDEX `texts_status_next_idx`;--> statement-breakpoint
ALTER TABLE `texts` ADD `from_number` text;--> statement-breakpoint
ALTER TABLE `texts` ADD `lease_owner` text;--> statement-breakpoint
CREATE INDEX `texts_open_due_idx` ON `texts` (`next_attempt_at`) WHERE next_attempt_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `texts_open_phone_idx` ON `texts` (`to_phone`,`created_at`,`id`) WHERE next_attempt_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `texts_phone_idx` ON `texts` (`to_phone`,`created_at`);--> statement-breakpoint
DROP INDEX `webhook_deliveries_due_idx`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_endpoint_idx`;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `lease_owner` text;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_open_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`next_attempt_at`) WHERE next_attempt_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event_idx` ON `webhook_deliveries` (`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created_idx` ON `webhook_deliveries` (`created_at`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `phone` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `sms_from` text;--> statement-breakpoint
CREATE INDEX `accounts_sms_from_idx` ON `accounts` (`sms_from`);--> statement-breakpoint
ALTER TABLE `jobs` ADD `tracking_token_hash` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `tracking_token_sealed` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `driver_token_hash` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `driver_token_sealed` text;--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_tracking_token_hash_uq` ON `jobs` (`tracking_token_hash`);--> statement-breakpoint
CREATE INDEX `jobs_driver_token_hash_idx` ON `jobs` (`driver_token_hash`);--> statement-breakpoint
ALTER TABLE `units` ADD `site_ids` text;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `site_ids` text;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `next_due_at` integer;--> statement-breakpoint
CREATE INDEX `webhook_endpoints_due_idx` ON `webhook_endpoints` (`next_due_at`) WHERE status = 'active' AND deleted_at IS NULL AND next_due_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`);--> statement-breakpoint
ALTER TABLE `webhook_attempts` DROP COLUMN `request_body`;--> statement-breakpoint
CREATE INDEX `webhook_event_payloads_created_idx` ON `webhook_event_payloads` (`created_at`);--> statement-breakpoint
-- Hand-added: a unit's one site becomes its list of sites; each endpoint learns when it next has
-- work (the scheduler reads endpoints by it); a ping caught mid-send by a crash is settled as failed.
UPDATE `units` SET `site_ids` = json_array(`site_id`) WHERE `site_id` IS NOT NULL;--> statement-breakpoint
UPDATE `webhook_endpoints` SET `next_due_at` = (SELECT min(d.`next_attempt_at`) FROM `webhook_deliveries` d WHERE d.`endpoint_id` = `webhook_endpoints`.`id` AND d.`status` = 'pending');--> statement-breakpoint
UPDATE `webhook_deliveries` SET `status` = 'failed', `next_attempt_at` = NULL WHERE `status` = 'sending';--> statement-breakpoint
UPDATE `webhook_deliveries` SET `next_attempt_at` = NULL WHERE `status` NOT IN ('pending', 'sending');--> statement-breakpoint
UPDATE `texts` SET `next_attempt_at` = NULL WHERE `status` NOT IN ('queued', 'sending');

CREATE TABLE `inbound_texts` (
	`message_sid` text PRIMARY KEY NOT NULL,
	`account_id` text,
	`job_id` text,
	`reply` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` text NOT NULL,
	`account_id` text NOT NULL,
	`site_id` text,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_events_event_uq` ON `webhook_events` (`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_events_account_seq_idx` ON `webhook_events` (`account_id`,`seq`);--> statement-breakpoint
CREATE INDEX `webhook_events_created_idx` ON `webhook_events` (`created_at`);--> statement-breakpoint
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
ALTER TABLE `webhook_endpoints` ADD `cursor` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_endpoints_due_idx` ON `webhook_endpoints` (`next_due_at`) WHERE status = 'active' AND deleted_at IS NULL AND next_due_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`);--> statement-breakpoint
ALTER TABLE `webhook_attempts` DROP COLUMN `request_body`;--> statement-breakpoint
CREATE INDEX `webhook_event_payloads_created_idx` ON `webhook_event_payloads` (`created_at`);--> statement-breakpoint
-- Hand-added: a unit's one site becomes its list of sites; the webhook payloads become the event
-- log endpoints read after their cursor (all endpoints start after the last one: deliveries
-- already written stay and go out as before); each endpoint learns when it next has work; a ping
-- caught mid-send by a crash is settled as failed; only open rows keep a next_attempt_at.
UPDATE `units` SET `site_ids` = json_array(`site_id`) WHERE `site_id` IS NOT NULL;--> statement-breakpoint
INSERT INTO `webhook_events` (`event_id`, `account_id`, `site_id`, `type`, `data`, `created_at`)
  SELECT `event_id`, `account_id`, json_extract(`data`, '$.job.site_id'), coalesce(json_extract(`data`, '$.event.type'), 'job.updated'), `data`, `created_at`
    FROM `webhook_event_payloads` ORDER BY `created_at`, `event_id`;--> statement-breakpoint
UPDATE `webhook_endpoints` SET `cursor` = (SELECT coalesce(max(`seq`), 0) FROM `webhook_events`);--> statement-breakpoint
UPDATE `webhook_deliveries` SET `status` = 'failed', `next_attempt_at` = NULL WHERE `status` = 'sending';--> statement-breakpoint
UPDATE `webhook_deliveries` SET `next_attempt_at` = NULL WHERE `status` NOT IN ('pending', 'sending');--> statement-breakpoint
UPDATE `webhook_endpoints` SET `next_due_at` = (SELECT min(d.`next_attempt_at`) FROM `webhook_deliveries` d WHERE d.`endpoint_id` = `webhook_endpoints`.`id` AND d.`status` = 'pending');--> statement-breakpoint
UPDATE `texts` SET `next_attempt_at` = NULL WHERE `status` NOT IN ('queued', 'sending');

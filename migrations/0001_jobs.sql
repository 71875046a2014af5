CREATE TABLE `job_events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`job_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`from_status` text,
	`to_status` text,
	`actor` text NOT NULL,
	`detail` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `job_events_job_seq_uq` ON `job_events` (`job_id`,`seq`);--> statement-breakpoint
CREATE INDEX `job_events_account_created_idx` ON `job_events` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `job_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`job_id` text NOT NULL,
	`text` text NOT NULL,
	`customer_visible` integer NOT NULL,
	`author_key_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `job_notes_job_idx` ON `job_notes` (`job_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`site_id` text NOT NULL,
	`external_ref` text,
	`source` text,
	`payer_type` text,
	`service_type` text,
	`urgency` text,
	`customer` text NOT NULL,
	`vehicle` text NOT NULL,
	`pickup` text NOT NULL,
	`destination` text,
	`status` text NOT NULL,
	`cancel_reason` text,
	`rating` real,
	`rating_comment` text,
	`rated_at` integer,
	`reopen_count` integer DEFAULT 0 NOT NULL,
	`eta_at` integer,
	`quote_cents` integer,
	`final_price_cents` integer,
	`payment_method` text,
	`unit_id` text,
	`tracking_token` text NOT NULL,
	`driver_token` text,
	`milestones` text NOT NULL,
	`event_seq` integer DEFAULT 0 NOT NULL,
	`imported` integer DEFAULT false NOT NULL,
	`archived_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `jobs_account_created_idx` ON `jobs` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_account_updated_idx` ON `jobs` (`account_id`,`updated_at`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_account_status_idx` ON `jobs` (`account_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_account_external_ref_uq` ON `jobs` (`account_id`,`external_ref`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_tracking_token_uq` ON `jobs` (`tracking_token`);--> statement-breakpoint
CREATE INDEX `jobs_driver_token_idx` ON `jobs` (`driver_token`);--> statement-breakpoint
CREATE INDEX `jobs_unit_idx` ON `jobs` (`unit_id`);--> statement-breakpoint
CREATE TABLE `units` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`site_id` text,
	`name` text NOT NULL,
	`driver_name` text,
	`driver_phone` text,
	`device_id` text NOT NULL,
	`off_duty` integer DEFAULT false NOT NULL,
	`lat` real,
	`lng` real,
	`accuracy_m` real,
	`heading` real,
	`speed_kph` real,
	`position_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `units_account_idx` ON `units` (`account_id`,`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `units_device_uq` ON `units` (`device_id`);--> statement-breakpoint
CREATE TABLE `services` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`service_type` text NOT NULL,
	`rates` text NOT NULL,
	`active` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `services_account_idx` ON `services` (`account_id`,`name`);--> statement-breakpoint
CREATE TABLE `texts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`job_id` text,
	`unit_id` text,
	`event_id` text,
	`recipient` text NOT NULL,
	`to_phone` text,
	`template` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`skip_reason` text,
	`provider_message_id` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `texts_status_next_idx` ON `texts` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `texts_job_idx` ON `texts` (`job_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`key_id` text NOT NULL,
	`idem_key` text NOT NULL,
	`request_hash` text NOT NULL,
	`status_code` integer NOT NULL,
	`response_body` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`key_id`, `idem_key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_created_idx` ON `idempotency_keys` (`created_at`);
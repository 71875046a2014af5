CREATE TABLE `sms_consents` (
	`account_id` text NOT NULL,
	`phone` text NOT NULL,
	`consented_at` integer,
	`consent_source` text,
	`opted_out_at` integer,
	`opt_out_source` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `phone`)
);
--> statement-breakpoint
CREATE TABLE `text_templates` (
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`body` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `name`)
);
--> statement-breakpoint
ALTER TABLE `accounts` ADD `default_country` text DEFAULT 'US' NOT NULL;--> statement-breakpoint
ALTER TABLE `texts` ADD `provider` text;--> statement-breakpoint
ALTER TABLE `texts` ADD `sending_at` integer;--> statement-breakpoint
CREATE INDEX `texts_provider_id_idx` ON `texts` (`provider_message_id`);--> statement-breakpoint
CREATE INDEX `jobs_customer_phone_idx` ON `jobs` (json_extract(`customer`, '$.phone'),`created_at`);
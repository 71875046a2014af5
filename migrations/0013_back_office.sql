CREATE TABLE `commercial_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`contacts` text NOT NULL,
	`rates` text,
	`billing_address` text,
	`internal_notes` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `commercial_accounts_account_created_idx` ON `commercial_accounts` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `commercial_accounts_account_name_uq` ON `commercial_accounts` (`account_id`,lower("name"));--> statement-breakpoint
CREATE TABLE `invoice_payments` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`invoice_id` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`method` text NOT NULL,
	`recorded_by_user_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`invoice_id`) REFERENCES `invoices`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `invoice_payments_invoice_idx` ON `invoice_payments` (`invoice_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`job_id` text NOT NULL,
	`number` integer NOT NULL,
	`status` text NOT NULL,
	`lines` text NOT NULL,
	`total_cents` integer NOT NULL,
	`amount_paid_cents` integer DEFAULT 0 NOT NULL,
	`issued_by_user_id` text,
	`issued_at` integer NOT NULL,
	`paid_at` integer,
	`voided_at` integer,
	`written_off_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_account_number_uq` ON `invoices` (`account_id`,`number`);--> statement-breakpoint
CREATE INDEX `invoices_job_idx` ON `invoices` (`job_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `jobs` ADD `commercial_account_id` text;--> statement-breakpoint
CREATE INDEX `jobs_commercial_account_idx` ON `jobs` (`commercial_account_id`);
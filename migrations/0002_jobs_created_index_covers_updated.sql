DROP INDEX `jobs_account_created_idx`;--> statement-breakpoint
CREATE INDEX `jobs_account_created_idx` ON `jobs` (`account_id`,`created_at`,`id`,`updated_at`);
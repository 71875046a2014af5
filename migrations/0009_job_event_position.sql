ALTER TABLE `job_events` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-added: events written before this migration keep the order they were written in (their
-- rowids grew with every insert; positions need not be dense), before the unique index is built.
UPDATE `job_events` SET `position` = rowid;--> statement-breakpoint
CREATE UNIQUE INDEX `job_events_position_uq` ON `job_events` (`position`);

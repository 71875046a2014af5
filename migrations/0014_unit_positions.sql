CREATE TABLE `unit_positions` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`unit_id` text NOT NULL,
	`at` integer NOT NULL,
	`lat` real NOT NULL,
	`lng` real NOT NULL,
	`accuracy_m` real,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`unit_id`) REFERENCES `units`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `unit_positions_unit_at_idx` ON `unit_positions` (`unit_id`,`at`);
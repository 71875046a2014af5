CREATE TABLE `installation` (
	`id` integer PRIMARY KEY NOT NULL,
	`link_key_check` text NOT NULL,
	`created_at` integer NOT NULL
);
